import { createHash } from 'node:crypto';

/**
 * SQL for vectors, the embeddings module's public surface for the repositories that search
 * their own kind (turns, summaries, facts, memories) over the shared `embeddings` table.
 */

/** A model id as a SQL literal: partial HNSW indexes only serve queries that name it literally. */
export function sqlLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export function vectorText(vector: number[]): string {
  return `[${vector.join(',')}]`;
}

/**
 * SQL pieces for a nearest-neighbour search over `embeddings` (alias `alias`) in one model:
 * the model and kind filter (literals, so the planner can use the partial HNSW index) and the
 * cosine distance to the query vector bound at `param` (pass `vectorText(q.vector)`).
 */
export function denseTerms(
  q: { model: string; dimensions: number },
  kind: string,
  param: string,
  alias = 'e',
): { filter: string; distance: string } {
  const d = q.dimensions;
  return {
    filter: `${alias}.model = ${sqlLiteral(q.model)} AND ${alias}.kind = ${sqlLiteral(kind)}`,
    distance: `(${alias}.embedding::vector(${d}) <=> ${param}::vector(${d}))`,
  };
}

export function hnswIndexName(model: string, kind: string): string {
  const hash = createHash('sha1').update(model).digest('hex').slice(0, 10);
  return `embeddings_hnsw_${kind.replace(/\W/g, '_')}_${hash}`;
}
