import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { similarityScale } from '../llm/sentence-models.js';
import { Sql, raw, run, sql } from '../database/sql.js';

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
 * A cosine distance of the model's vectors as a similarity on the common scale, in SQL: every
 * threshold and weight compares against this, never against `1 - distance` (models differ in
 * how alike they call unrelated texts). Order by the distance itself: that is what HNSW serves.
 */
export function similaritySql(model: string, distance: Sql): Sql {
  const { scale, offset } = similarityScale(model);
  if (scale === 1 && offset === 0) return sql`(1 - ${distance})`;
  return sql`(${raw(String(offset))} + ${raw(String(scale))} * (1 - ${distance}))`;
}

/** The same in TypeScript, for a distance read back from SQL. */
export function similarityOf(model: string, distance: number): number {
  const { scale, offset } = similarityScale(model);
  return offset + scale * (1 - distance);
}

/**
 * SQL pieces for a nearest-neighbour search over `embeddings` (alias `alias`, a constant) in one
 * model: the model and kind filter (literals, so the planner can use the partial HNSW index),
 * the cosine distance to the query vector (bound as vectorText), and that distance as a
 * similarity on the common scale.
 */
export function denseTerms(
  q: { model: string; dimensions: number; vector: number[] },
  kind: string,
  alias = 'e',
): { filter: Sql; distance: Sql; similarity: Sql } {
  const a = raw(alias);
  const d = raw(String(q.dimensions));
  const distance = sql`(${a}.embedding::vector(${d}) <=> ${vectorText(q.vector)}::vector(${d}))`;
  return {
    filter: sql`${a}.model = ${raw(sqlLiteral(q.model))} AND ${a}.kind = ${raw(sqlLiteral(kind))}`,
    distance,
    similarity: similaritySql(q.model, distance),
  };
}

export function hnswIndexName(model: string, kind: string): string {
  const hash = createHash('sha1').update(model).digest('hex').slice(0, 10);
  return `embeddings_hnsw_${kind.replace(/\W/g, '_')}_${hash}`;
}

/**
 * Inside a transaction, before a filtered nearest-neighbour query: the HNSW scan goes on past
 * rows the filter drops (pgvector's iterative scan) and keeps `wanted` candidates in view, so
 * a family's nearest rows are found however many other families' rows lie nearer.
 */
export async function widenHnswScan(m: EntityManager, wanted: number): Promise<void> {
  const efSearch = String(Math.min(1000, Math.max(40, wanted)));
  await run(
    m,
    sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
            set_config('hnsw.ef_search', ${efSearch}, true)`,
  );
}
