/** Nest injection token of the configured `Embedder`. */
export const EMBEDDER = Symbol('EMBEDDER');

/**
 * What a text is embedded as: a search query, or a passage to be found (stored texts, and texts
 * compared with each other). Models trained with prefixes (e5, bge) are given theirs.
 */
export type EmbedRole = 'query' | 'passage';

/**
 * Sentence embeddings. Vectors are L2-normalised, so cosine similarity is a dot product. A
 * failure raises ModelUnavailableError (or ModelOutputError for a malformed answer): callers
 * store the text without a vector and embed it again later.
 */
export interface Embedder {
  /** `local:<model>` or `openai:<model>`; stored with each vector. */
  readonly modelId: string;
  readonly dimensions: number;
  /** One vector per text, in order (as passages by default). An empty list resolves to []. */
  embed(texts: string[], role?: EmbedRole): Promise<number[][]>;
  /** Releases workers or sockets; called on application shutdown. */
  close?(): Promise<void>;
}

export function l2Normalize(vector: number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm === 0 || !Number.isFinite(norm)) return vector.map(() => 0);
  return vector.map((x) => x / norm);
}

/** Cosine similarity of two normalised vectors. */
export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}
