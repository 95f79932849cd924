import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { SCHEMA_XACT_LOCK_SQL } from '../database/schema-lock.js';
import { EmbeddingKind } from './embedding-kinds.js';
import { hnswIndexName, sqlLiteral, vectorText } from './vector-sql.js';

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
    return this.m().query(
      `SELECT model, dimensions, state, created_at AS "createdAt", activated_at AS "activatedAt"
         FROM embedding_models ORDER BY created_at`,
    );
  }

  async registerModel(model: string, dimensions: number, state: ModelState): Promise<void> {
    await this.m().query(
      `INSERT INTO embedding_models (model, dimensions, state, activated_at)
       VALUES ($1, $2, $3, CASE WHEN $3 = 'ACTIVE' THEN now() END)
       ON CONFLICT (model) DO UPDATE SET state = EXCLUDED.state,
         activated_at = COALESCE(EXCLUDED.activated_at, embedding_models.activated_at)`,
      [model, dimensions, state],
    );
  }

  /** Makes `model` the one search uses, retiring the previous one, atomically. */
  async activate(model: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(`UPDATE embedding_models SET state = 'RETIRED' WHERE state = 'ACTIVE'`);
      await m.query(
        `UPDATE embedding_models SET state = 'ACTIVE', activated_at = now() WHERE model = $1`,
        [model],
      );
    });
  }

  /** Under the schema lock: two instances booting together would both create it. */
  async ensureIndex(model: string, dimensions: number, kind: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(SCHEMA_XACT_LOCK_SQL);
      await m.query(
        `CREATE INDEX IF NOT EXISTS ${hnswIndexName(model, kind)} ON embeddings
           USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops)
           WHERE model = ${sqlLiteral(model)} AND kind = ${sqlLiteral(kind)}`,
      );
    });
  }

  async dropIndex(model: string, kind: string): Promise<void> {
    await this.m().query(`DROP INDEX IF EXISTS ${hnswIndexName(model, kind)}`);
  }

  /** One statement per batch: vector parsing dominates insert cost on the embedded database. */
  async upsert(kind: string, model: string, rows: VectorRow[], manager?: EntityManager) {
    if (rows.length === 0) return;
    await this.m(manager).query(
      `INSERT INTO embeddings (kind, item_id, model, embedding, legacy_id, user_id)
       SELECT $1, t.item_id, $2, t.embedding::vector, t.legacy_id, t.user_id
         FROM unnest($3::uuid[], $4::text[], $5::uuid[], $6::uuid[])
           AS t(item_id, embedding, legacy_id, user_id)
       ON CONFLICT (kind, item_id, model) DO UPDATE SET embedding = EXCLUDED.embedding`,
      [
        kind,
        model,
        rows.map((r) => r.itemId),
        rows.map((r) => vectorText(r.vector)),
        rows.map((r) => r.legacyId ?? null),
        rows.map((r) => r.userId ?? null),
      ],
    );
  }

  async deleteItems(kind: string, itemIds: readonly string[], manager?: EntityManager) {
    if (itemIds.length === 0) return;
    await this.m(manager).query(
      `DELETE FROM embeddings WHERE kind = $1 AND item_id = ANY($2::uuid[])`,
      [kind, itemIds],
    );
  }

  async deleteModel(model: string): Promise<void> {
    await this.m().query(`DELETE FROM embeddings WHERE model = $1`, [model]);
  }

  /** Rows of a kind that should have a vector for `model` and do not. */
  missing(
    kind: EmbeddingKind,
    model: string,
    limit: number,
  ): Promise<{ id: string; text: string; legacyId: string | null; userId: string | null }[]> {
    return this.m().query(
      `SELECT i.id, ${kind.textSql} AS text,
              ${kind.legacyColumn ? `i.${kind.legacyColumn}` : 'NULL::uuid'} AS "legacyId",
              ${kind.userColumn ? `i.${kind.userColumn}` : 'NULL::uuid'} AS "userId"
         FROM ${kind.table} i
        WHERE ${kind.whereSql ?? 'true'}
          AND NOT EXISTS (SELECT 1 FROM embeddings e
                           WHERE e.kind = $1 AND e.item_id = i.id AND e.model = $2)
        ORDER BY i.id
        LIMIT $3`,
      [kind.kind, model, limit],
    );
  }

  async counts(kind: EmbeddingKind, model: string): Promise<{ total: number; embedded: number }> {
    const rows: { total: string; embedded: string }[] = await this.m().query(
      `SELECT count(*) AS total,
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM embeddings e
                 WHERE e.kind = $1 AND e.item_id = i.id AND e.model = $2)) AS embedded
         FROM ${kind.table} i WHERE ${kind.whereSql ?? 'true'}`,
      [kind.kind, model],
    );
    return { total: Number(rows[0].total), embedded: Number(rows[0].embedded) };
  }

  /** Vectors of given items for a model (for duplicate checks against stored rows). */
  async vectorsOf(kind: string, model: string, itemIds: readonly string[]) {
    if (itemIds.length === 0) return new Map<string, number[]>();
    const rows: { itemId: string; embedding: string }[] = await this.m().query(
      `SELECT item_id AS "itemId", embedding::text AS embedding FROM embeddings
        WHERE kind = $1 AND model = $2 AND item_id = ANY($3::uuid[])`,
      [kind, model, itemIds],
    );
    return new Map(rows.map((r) => [r.itemId, JSON.parse(r.embedding) as number[]]));
  }
}
