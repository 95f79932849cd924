import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { SCHEMA_XACT_LOCK_SQL } from '../database/schema-lock.js';
import { EmbeddingKind } from './embedding-kinds.js';
import { hnswIndexName, sqlLiteral, vectorText } from './vector-sql.js';
import { raw, run, sql } from '../database/sql.js';

export type ModelState = 'ACTIVE' | 'BUILDING' | 'RETIRED';

export interface EmbeddingModelRow {
  model: string;
  dimensions: number;
  state: ModelState;
  createdAt: Date;
  activatedAt: Date | null;
}

export interface VectorRow {
  itemId: string;
  vector: number[];
  legacyId?: string | null;
  userId?: string | null;
}

@Injectable()
export class EmbeddingRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  models(): Promise<EmbeddingModelRow[]> {
    return run(
      this.m(),
      sql`SELECT model, dimensions, state, created_at AS "createdAt", activated_at AS "activatedAt"
         FROM embedding_models ORDER BY created_at`,
    );
  }

  async registerModel(model: string, dimensions: number, state: ModelState): Promise<void> {
    await run(
      this.m(),
      sql`INSERT INTO embedding_models (model, dimensions, state, activated_at)
       VALUES (${model}, ${dimensions}, ${state}, CASE WHEN ${state} = 'ACTIVE' THEN now() END)
       ON CONFLICT (model) DO UPDATE SET state = EXCLUDED.state,
         activated_at = COALESCE(EXCLUDED.activated_at, embedding_models.activated_at)`,
    );
  }

  /** Makes `model` the one search uses, retiring the previous one, atomically. */
  async activate(model: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await run(m, sql`UPDATE embedding_models SET state = 'RETIRED' WHERE state = 'ACTIVE'`);
      await run(
        m,
        sql`UPDATE embedding_models SET state = 'ACTIVE', activated_at = now() WHERE model = ${model}`,
      );
    });
  }

  /** Under the schema lock: two instances booting together would both create it. */
  async ensureIndex(model: string, dimensions: number, kind: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await run(m, raw(SCHEMA_XACT_LOCK_SQL));
      await run(
        m,
        sql`CREATE INDEX IF NOT EXISTS ${raw(hnswIndexName(model, kind))} ON embeddings
           USING hnsw ((embedding::vector(${raw(String(dimensions))})) vector_cosine_ops)
           WHERE model = ${raw(sqlLiteral(model))} AND kind = ${raw(sqlLiteral(kind))}`,
      );
    });
  }

  async dropIndex(model: string, kind: string): Promise<void> {
    await run(this.m(), sql`DROP INDEX IF EXISTS ${raw(hnswIndexName(model, kind))}`);
  }

  /** One statement per batch: vector parsing dominates insert cost on the embedded database. */
  async upsert(kind: string, model: string, rows: VectorRow[], manager?: EntityManager) {
    if (rows.length === 0) return;
    const itemIds = rows.map((r) => r.itemId);
    const vectors = rows.map((r) => vectorText(r.vector));
    const legacyIds = rows.map((r) => r.legacyId ?? null);
    const userIds = rows.map((r) => r.userId ?? null);
    await run(
      this.m(manager),
      sql`INSERT INTO embeddings (kind, item_id, model, embedding, legacy_id, user_id)
       SELECT ${kind}, t.item_id, ${model}, t.embedding::vector, t.legacy_id, t.user_id
         FROM unnest(${itemIds}::uuid[], ${vectors}::text[], ${legacyIds}::uuid[], ${userIds}::uuid[])
           AS t(item_id, embedding, legacy_id, user_id)
       ON CONFLICT (kind, item_id, model) DO UPDATE SET embedding = EXCLUDED.embedding`,
    );
  }

  async deleteItems(kind: string, itemIds: readonly string[], manager?: EntityManager) {
    if (itemIds.length === 0) return;
    await run(
      this.m(manager),
      sql`DELETE FROM embeddings WHERE kind = ${kind} AND item_id = ANY(${itemIds}::uuid[])`,
    );
  }

  async deleteModel(model: string): Promise<void> {
    await run(this.m(), sql`DELETE FROM embeddings WHERE model = ${model}`);
  }

  /** Rows of a kind that should have a vector for `model` and do not. */
  missing(
    kind: EmbeddingKind,
    model: string,
    limit: number,
  ): Promise<{ id: string; text: string; legacyId: string | null; userId: string | null }[]> {
    return run(
      this.m(),
      sql`SELECT i.id, ${raw(kind.textSql)} AS text,
              ${raw(kind.legacyColumn ? `i.${kind.legacyColumn}` : 'NULL::uuid')} AS "legacyId",
              ${raw(kind.userColumn ? `i.${kind.userColumn}` : 'NULL::uuid')} AS "userId"
         FROM ${raw(kind.table)} i
        WHERE ${raw(kind.whereSql ?? 'true')}
          AND NOT EXISTS (SELECT 1 FROM embeddings e
                           WHERE e.kind = ${kind.kind} AND e.item_id = i.id AND e.model = ${model})
        ORDER BY i.id
        LIMIT ${limit}`,
    );
  }

  async counts(kind: EmbeddingKind, model: string): Promise<{ total: number; embedded: number }> {
    const rows: { total: string; embedded: string }[] = await run(
      this.m(),
      sql`SELECT count(*) AS total,
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM embeddings e
                 WHERE e.kind = ${kind.kind} AND e.item_id = i.id AND e.model = ${model})) AS embedded
         FROM ${raw(kind.table)} i WHERE ${raw(kind.whereSql ?? 'true')}`,
    );
    return { total: Number(rows[0].total), embedded: Number(rows[0].embedded) };
  }

  /** Vectors of given items for a model (for duplicate checks against stored rows). */
  async vectorsOf(kind: string, model: string, itemIds: readonly string[]) {
    if (itemIds.length === 0) return new Map<string, number[]>();
    const rows: { itemId: string; embedding: string }[] = await run(
      this.m(),
      sql`SELECT item_id AS "itemId", embedding::text AS embedding FROM embeddings
        WHERE kind = ${kind} AND model = ${model} AND item_id = ANY(${itemIds}::uuid[])`,
    );
    return new Map(rows.map((r) => [r.itemId, JSON.parse(r.embedding) as number[]]));
  }
}
