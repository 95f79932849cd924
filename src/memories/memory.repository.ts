import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { denseTerms, vectorText, widenHnswScan } from '../embeddings/vector-sql.js';
import { MemoryEntity, MemoryHistoryEntry } from './memory.entity.js';
import {
  ArchiveReason,
  ConversationMode,
  MemoryHistoryAction,
  MemorySource,
  MemoryStatus,
  MemoryType,
} from './memory.enums.js';
import { MEMORY_KIND, QueryVector, columns, vectorJoin } from './memory-sql.js';
import { activeMemoryScopeSql, memoryScopeSql } from './memory-scope.js';
import { Sql, empty, join, raw, run, sql } from '../database/sql.js';

/** Memories scored by similarity for the memory block: this many most useful, this many nearest. */
const CONTEXT_POOL = 200;

function history(entry: MemoryHistoryEntry): string {
  return JSON.stringify([entry]);
}

export interface NewMemory {
  userId: string;
  legacyId: string | null;
  type: MemoryType;
  content: string;
  normalized: string;
  slotKey: string | null;
  slotValue: string | null;
  confidence: number;
  source: MemorySource;
  conversationId: string | null;
  sourceMessageId: string | null;
  sourceTurnIndex: number | null;
  conversationMode: ConversationMode | null;
  sourceReference: string | null;
  referenceCount: number;
  lastReferencedAt: Date | null;
  status: MemoryStatus;
  validFrom: Date;
  validTo: Date | null;
  archivedAt: Date | null;
  archiveReason: ArchiveReason | null;
  history: MemoryHistoryEntry[];
  createdAt: Date;
  updatedAt: Date;
}

/** Which of a user's memories to forget; the conditions that are given all apply. */
export interface ForgetScope {
  ids?: readonly string[];
  conversationId?: string;
  sourceMessageId?: string;
}

export interface ContextCandidateRow {
  id: string;
  type: MemoryType;
  content: string;
  confidence: number;
  referenceCount: number;
  lastReferencedAt: Date | null;
  createdAt: Date;
  conversationId: string | null;
  sourceMessageId: string | null;
  sourceTurnIndex: number | null;
  messageMetadata: Record<string, unknown> | null;
  occurredAt: Date | null;
  typeWeight: number;
  recency: number;
  similarity: number | null;
  base: number;
  score: number;
}

/**
 * The memories themselves: the one write path's statements (insert, the duplicate and slot
 * lookups, references, supersession, the cap), forgetting and restoring, reads by id, and the
 * ranking of the memory block. Every query is scoped by the owning user in SQL; the list and
 * search, the sweeps, transfer, uses and the ledger have repositories of their own.
 */
@Injectable()
export class MemoryRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Serializes writes to one user's memories (dedupe, caps and the rate limit stay exact). */
  async lockUser(manager: EntityManager, userId: string): Promise<void> {
    await run(
      manager,
      sql`SELECT pg_advisory_xact_lock(hashtextextended('memories:' || ${userId}, 0))`,
    );
  }

  // ---- reads -------------------------------------------------------------------------------

  async findOwned(
    userId: string,
    id: string,
    manager?: EntityManager,
  ): Promise<MemoryEntity | null> {
    const rows: MemoryEntity[] = await run(
      this.m(manager),
      sql`SELECT ${columns()} FROM memories m WHERE m.id = ${id} AND m.user_id = ${userId}`,
    );
    return rows[0] ?? null;
  }

  findOwnedMany(
    userId: string,
    ids: readonly string[],
    manager?: EntityManager,
  ): Promise<MemoryEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return run(
      this.m(manager),
      sql`SELECT ${columns()} FROM memories m WHERE m.id = ANY(${ids}::uuid[]) AND m.user_id = ${userId}`,
    );
  }

  /**
   * The user's most useful active memories in scope (the legacy's and global ones):
   * type weight x confidence x recency + 0.1 x references, plus relevanceWeight x cosine
   * similarity to the query; recency = 1 / (1 + days since last referenced, at most 30).
   *
   * Up to `scoreAllMax` candidates every one is scored by similarity: at the default cap of
   * 1,000 per scope that is cheaper than any index (25 ms against 66 ms at 1,000 memories).
   * Beyond it, only a pool is: the CONTEXT_POOL most useful memories and the CONTEXT_POOL
   * nearest to the query (HNSW, iterative scan so that other users' vectors do not crowd the
   * user's out). Measuring every memory's distance cost 140 ms at 10,000 memories on the
   * embedded database, the pool a third of that, and it gives the same top items unless an item
   * is neither among the most useful nor among the nearest, which the weights make unreachable
   * for the few items a context takes.
   */
  async contextCandidates(input: {
    userId: string;
    legacyId: string;
    now: Date;
    typeWeights: Record<string, number>;
    q: QueryVector | null;
    relevanceWeight: number;
    limit: number;
    /** Up to this many candidates, all are scored (cheaper than the index at that size). */
    scoreAllMax: number;
  }): Promise<ContextCandidateRow[]> {
    const { userId, legacyId, now, relevanceWeight, limit } = input;
    const typeWeights = JSON.stringify(input.typeWeights);
    const inScope = activeMemoryScopeSql('m', userId, legacyId);
    const scored = (similarity: Sql, joined: Sql, where: Sql) => sql`
         SELECT m.id, m.type, m.content, m.confidence, m.reference_count AS "referenceCount",
                m.last_referenced_at AS "lastReferencedAt", m.created_at AS "createdAt",
                m.conversation_id AS "conversationId", m.source_message_id AS "sourceMessageId",
                m.source_turn_index AS "sourceTurnIndex", w.weight AS "typeWeight", r.recency,
                ${similarity} AS similarity,
                w.weight * m.confidence * r.recency + 0.1 * m.reference_count AS base
           FROM memories m
           CROSS JOIN LATERAL (SELECT COALESCE((${typeWeights}::jsonb ->> m.type)::float8, 1) AS weight) w
           CROSS JOIN LATERAL (
             SELECT 1.0 / (1 + LEAST(30, GREATEST(0, extract(epoch FROM
                      (${now}::timestamptz - COALESCE(m.last_referenced_at, m.created_at))) / 86400.0)))
                    AS recency) r
           ${joined}
          WHERE ${where}`;
    // Best first: usefulness plus relevanceWeight x similarity. The source turns of the chosen
    // few only: joined before the limit, the planner hashed every message of the database.
    const ranked = (inner: Sql) =>
      sql`SELECT top.*, msg.metadata AS "messageMetadata", msg.occurred_at AS "occurredAt"
         FROM (SELECT c.*, c.base + ${relevanceWeight} * COALESCE(c.similarity, 0) AS score FROM (${inner}) c
                ORDER BY score DESC, c.id
                LIMIT ${limit}) top
         LEFT JOIN messages msg ON msg.id = top."sourceMessageId"
        ORDER BY top.score DESC, top.id`;
    if (!input.q) return run(this.m(), ranked(scored(sql`NULL::float8`, empty, inScope)));

    const q = input.q;
    const { on, similarity } = vectorJoin(q);
    const withQuery = (inner: Sql) =>
      sql`WITH qv AS MATERIALIZED (SELECT ${vectorText(q.vector)}::vector(${raw(String(q.dimensions))}) AS v)${inner}`;
    const similar = (where: Sql) =>
      scored(
        sql`GREATEST(0, ${similarity})`,
        sql`CROSS JOIN qv LEFT JOIN embeddings e ON ${on}`,
        where,
      );
    const [{ n }] = await run<{ n: number }>(
      this.m(),
      sql`SELECT count(*)::int AS n FROM memories m WHERE ${inScope}`,
    );
    if (n <= input.scoreAllMax) {
      return run(this.m(), withQuery(sql` ${ranked(similar(inScope))}`));
    }

    const poolSize = Math.max(CONTEXT_POOL, limit);
    const nearest = denseTerms(q, MEMORY_KIND);
    return this.dataSource.transaction(async (m) => {
      await widenHnswScan(m, CONTEXT_POOL);
      return run(
        m,
        withQuery(sql`,
         useful AS (
           SELECT m.id FROM memories m
             CROSS JOIN LATERAL (SELECT COALESCE((${typeWeights}::jsonb ->> m.type)::float8, 1) AS weight) w
            WHERE ${inScope}
            ORDER BY w.weight * m.confidence / (1 + LEAST(30, GREATEST(0, extract(epoch FROM
                       (${now}::timestamptz - COALESCE(m.last_referenced_at, m.created_at))) / 86400.0)))
                     + 0.1 * m.reference_count DESC, m.id
            LIMIT ${poolSize}
         ),
         near AS (
           SELECT m.id FROM embeddings e JOIN memories m ON m.id = e.item_id
            WHERE ${nearest.filter} AND ${inScope}
            ORDER BY ${nearest.distance}
            LIMIT ${poolSize}
         ),
         pool AS (SELECT id FROM useful UNION SELECT id FROM near)
         ${ranked(similar(sql`m.id IN (SELECT id FROM pool)`))}`),
      );
    });
  }

  // ---- writes ------------------------------------------------------------------------------

  async insert(manager: EntityManager, memory: NewMemory): Promise<MemoryEntity> {
    const rows = await this.insertMany(manager, [memory]);
    return rows[0];
  }

  /** One statement for many rows (imports): parsing is the main cost on the embedded database. */
  async insertMany(manager: EntityManager, memories: NewMemory[]): Promise<MemoryEntity[]> {
    if (memories.length === 0) return [];
    const ids = memories.map(() => randomUUID());
    const rows = memories.map((m, i) => ({
      id: ids[i],
      user_id: m.userId,
      legacy_id: m.legacyId,
      type: m.type,
      content: m.content,
      normalized: m.normalized,
      slot_key: m.slotKey,
      slot_value: m.slotValue,
      confidence: m.confidence,
      source: m.source,
      conversation_id: m.conversationId,
      source_message_id: m.sourceMessageId,
      source_turn_index: m.sourceTurnIndex,
      conversation_mode: m.conversationMode,
      source_reference: m.sourceReference,
      reference_count: m.referenceCount,
      last_referenced_at: m.lastReferencedAt?.toISOString() ?? null,
      status: m.status,
      valid_from: m.validFrom.toISOString(),
      valid_to: m.validTo?.toISOString() ?? null,
      archived_at: m.archivedAt?.toISOString() ?? null,
      archive_reason: m.archiveReason,
      history: m.history,
      created_at: m.createdAt.toISOString(),
      updated_at: m.updatedAt.toISOString(),
    }));
    const inserted: MemoryEntity[] = await run(
      manager,
      sql`WITH ins AS (
         INSERT INTO memories (id, user_id, legacy_id, type, content, normalized, slot_key,
                slot_value, confidence, source, conversation_id, source_message_id,
                source_turn_index, conversation_mode, source_reference, reference_count,
                last_referenced_at, status, valid_from, valid_to, archived_at, archive_reason,
                history, created_at, updated_at)
         SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS t(
           id uuid, user_id uuid, legacy_id uuid, type text, content text, normalized text,
           slot_key text, slot_value text, confidence real, source text, conversation_id uuid,
           source_message_id uuid, source_turn_index integer, conversation_mode text,
           source_reference text, reference_count integer, last_referenced_at timestamptz,
           status text, valid_from timestamptz, valid_to timestamptz, archived_at timestamptz,
           archive_reason text, history jsonb, created_at timestamptz, updated_at timestamptz)
         RETURNING *)
       SELECT ${columns('ins')} FROM ins`,
    );
    const byId = new Map(inserted.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)!);
  }

  /** An active or archived memory in scope with the same normalized text (not superseded). */
  async findSameText(
    manager: EntityManager,
    userId: string,
    legacyId: string | null,
    normalized: string,
  ): Promise<MemoryEntity | null> {
    const rows: MemoryEntity[] = await run(
      manager,
      sql`SELECT ${columns()} FROM memories m
        WHERE ${memoryScopeSql('m', userId, legacyId)}
          AND m.normalized = ${normalized} AND m.status <> 'DELETED' AND m.superseded_by IS NULL
        ORDER BY m.status, m.created_at LIMIT 1`,
    );
    return rows[0] ?? null;
  }

  /**
   * The most similar active or archived memory in scope, if at least `min` (cosine). An exact
   * scan of the user's vectors: ordering by similarity rather than distance keeps the planner
   * off the global HNSW index, whose candidate list could miss this user's rows.
   */
  async findSimilar(
    manager: EntityManager,
    userId: string,
    legacyId: string | null,
    q: QueryVector,
    min: number,
  ): Promise<(MemoryEntity & { similarity: number }) | null> {
    const { on, similarity } = vectorJoin(q);
    const rows: (MemoryEntity & { similarity: number })[] = await run(
      manager,
      sql`WITH qv AS MATERIALIZED (SELECT ${vectorText(q.vector)}::vector(${raw(String(q.dimensions))}) AS v)
       SELECT * FROM (
         SELECT ${columns()}, ${similarity} AS similarity
           FROM memories m CROSS JOIN qv JOIN embeddings e ON ${on}
          WHERE ${memoryScopeSql('m', userId, legacyId)}
            AND m.status <> 'DELETED' AND m.superseded_by IS NULL) s
        WHERE s.similarity >= ${min}
        ORDER BY s.similarity DESC, s.id LIMIT 1`,
    );
    return rows[0] ?? null;
  }

  /** Active memories in scope that set this slot (to any value). */
  findSlot(
    manager: EntityManager,
    userId: string,
    legacyId: string | null,
    key: string,
  ): Promise<MemoryEntity[]> {
    return run(
      manager,
      sql`SELECT ${columns()} FROM memories m
        WHERE ${memoryScopeSql('m', userId, legacyId)}
          AND m.status = 'ACTIVE' AND m.slot_key = ${key}
        ORDER BY m.created_at, m.id`,
    );
  }

  /** Active or archived memories (not superseded) with any of these normalized texts. */
  findByNormalized(
    manager: EntityManager,
    userId: string,
    normalized: readonly string[],
  ): Promise<MemoryEntity[]> {
    if (normalized.length === 0) return Promise.resolve([]);
    return run(
      manager,
      sql`SELECT ${columns()} FROM memories m
        WHERE m.user_id = ${userId} AND m.normalized = ANY(${normalized}::text[])
          AND m.status <> 'DELETED' AND m.superseded_by IS NULL
        ORDER BY m.status, m.created_at, m.id`,
    );
  }

  /**
   * A restatement: one more reference. An archived memory (cap or retention) that is stated
   * again becomes active again.
   */
  async reference(manager: EntityManager, id: string, now: Date, by = 1): Promise<MemoryEntity> {
    const [row] = await run<MemoryEntity>(
      manager,
      sql`UPDATE memories m SET reference_count = reference_count + ${by},
              last_referenced_at = GREATEST(last_referenced_at, ${now}::timestamptz),
              history = CASE WHEN status = 'ARCHIVED' THEN history || ${history({
                at: now.toISOString(),
                action: MemoryHistoryAction.REACTIVATED,
                fromStatus: MemoryStatus.ARCHIVED,
                reason: 'stated again',
              })}::jsonb ELSE history END,
              archived_at = CASE WHEN status = 'ARCHIVED' THEN NULL ELSE archived_at END,
              archive_reason = CASE WHEN status = 'ARCHIVED' THEN NULL ELSE archive_reason END,
              updated_at = CASE WHEN status = 'ARCHIVED' THEN ${now} ELSE updated_at END,
              status = CASE WHEN status = 'ARCHIVED' THEN 'ACTIVE' ELSE status END
        WHERE id = ${id}
        RETURNING ${columns()}`,
    );
    return row;
  }

  async supersede(
    manager: EntityManager,
    oldIds: string[],
    newId: string,
    now: Date,
  ): Promise<void> {
    if (oldIds.length === 0) return;
    await run(
      manager,
      sql`UPDATE memories SET status = 'ARCHIVED', archive_reason = 'SUPERSEDED', archived_at = ${now},
              valid_to = ${now}, superseded_by = ${newId}, updated_at = ${now},
              history = history || jsonb_build_array(jsonb_build_object(
                'at', ${now.toISOString()}::text, 'action', 'SUPERSEDED', 'fromStatus', status,
                'relatedMemoryId', ${newId}::text))
        WHERE id = ANY(${oldIds}::uuid[])`,
    );
  }

  /** Past the cap, archives the least referenced, oldest active memories of one scope. */
  async archiveOverCap(
    manager: EntityManager,
    userId: string,
    legacyId: string | null,
    cap: number,
    keep: readonly string[],
    now: Date,
  ): Promise<string[]> {
    const rows = await run<{ id: string }>(
      manager,
      sql`WITH over AS (
         SELECT id FROM memories
          WHERE user_id = ${userId} AND legacy_id IS NOT DISTINCT FROM ${legacyId} AND status = 'ACTIVE'
          ORDER BY (id = ANY(${keep}::uuid[])) DESC, reference_count DESC, created_at DESC, id DESC
          OFFSET ${cap})
       UPDATE memories m SET status = 'ARCHIVED', archive_reason = 'CAP', archived_at = ${now},
              updated_at = ${now},
              history = history || jsonb_build_array(jsonb_build_object(
                'at', ${now.toISOString()}::text, 'action', 'ARCHIVED', 'fromStatus', 'ACTIVE',
                'reason', 'over the limit of active memories'))
         FROM over WHERE m.id = over.id
       RETURNING m.id`,
    );
    return rows.map((r) => r.id);
  }

  /** Soft delete: restorable during the undo window. */
  async forget(
    userId: string,
    where: ForgetScope,
    now: Date,
    manager?: EntityManager,
  ): Promise<MemoryEntity[]> {
    const conditions = [sql`m.user_id = ${userId}`, sql`m.status <> 'DELETED'`];
    if (where.ids) conditions.push(sql`m.id = ANY(${where.ids}::uuid[])`);
    if (where.conversationId) conditions.push(sql`m.conversation_id = ${where.conversationId}`);
    if (where.sourceMessageId) {
      conditions.push(sql`m.source_message_id = ${where.sourceMessageId}`);
    }
    return run<MemoryEntity>(
      this.m(manager),
      sql`UPDATE memories m SET status = 'DELETED', deleted_at = ${now}, updated_at = ${now},
              history = history || jsonb_build_array(jsonb_build_object(
                'at', ${now.toISOString()}::text, 'action', 'FORGOTTEN', 'fromStatus', status))
        WHERE ${join(conditions, ' AND ')}
        RETURNING ${columns()}`,
    );
  }

  async restore(
    manager: EntityManager,
    userId: string,
    id: string,
    to: MemoryStatus,
    now: Date,
  ): Promise<MemoryEntity | null> {
    const [row] = await run<MemoryEntity>(
      manager,
      sql`UPDATE memories m SET status = ${to}, deleted_at = NULL, updated_at = ${now},
              archived_at = CASE WHEN ${to} = 'ARCHIVED' THEN archived_at END,
              archive_reason = CASE WHEN ${to} = 'ARCHIVED' THEN archive_reason END,
              superseded_by = CASE WHEN ${to} = 'ACTIVE' THEN NULL ELSE superseded_by END,
              valid_to = CASE WHEN ${to} = 'ACTIVE' THEN NULL ELSE valid_to END,
              history = history || jsonb_build_array(jsonb_build_object(
                'at', ${now.toISOString()}::text, 'action', 'RESTORED', 'fromStatus', status))
        WHERE id = ${id} AND user_id = ${userId}
        RETURNING ${columns()}`,
    );
    return row ?? null;
  }

  /** Hard delete of everything the user has, now (vectors go with the rows, by trigger). */
  async deleteAll(userId: string, manager?: EntityManager): Promise<string[]> {
    const rows = await run<{ id: string }>(
      this.m(manager),
      sql`DELETE FROM memories WHERE user_id = ${userId} RETURNING id`,
    );
    return rows.map((r) => r.id);
  }
}
