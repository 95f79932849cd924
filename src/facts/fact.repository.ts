import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { denseTerms, vectorText } from '../embeddings/vector-sql.js';
import {
  activeForSql,
  mentionCountSql,
  statusSql,
  supersessionVisibleSql,
  viewerColumnsSql,
  visibleSql,
} from './fact-visibility.js';
import { FactEntity, FactHistoryEntity, FactSourceEntity } from './fact.entity.js';
import {
  FactAction,
  FactCategory,
  FactSourceKind,
  FactStatus,
  FactVisibility,
} from './fact.enums.js';
import { SqlParams } from '../database/sql-params.js';

export const FACT_KIND = 'fact';

/**
 * A fact matches a search by meaning when it is close to the query (FACT_SEARCH_MIN_SIMILARITY)
 * and within this much of the closest fact: sentence vectors of facts about the same person
 * all sit fairly close to each other, so an absolute cut alone lets too much through.
 */
const MEANING_MARGIN = 0.1;

const COLUMNS = `f.id, f.legacy_id AS "legacyId", f.author_id AS "authorId", f.category, f.content,
  f.normalized, f.visibility, f.status, f.confidence, f.mention_count AS "mentionCount",
  f.shared_mention_count AS "sharedMentionCount", f.source_conversation_id AS "sourceConversationId", f.source_range_start AS "sourceRangeStart",
  f.source_range_end AS "sourceRangeEnd", f.source_message_ids AS "sourceMessageIds",
  f.valid_from AS "validFrom", f.valid_to AS "validTo", f.superseded_by AS "supersededBy",
  f.deleted_at AS "deletedAt", f.deleted_by AS "deletedBy", f.created_at AS "createdAt",
  f.updated_at AS "updatedAt"`;

const SOURCE_COLUMNS = `id, fact_id AS "factId", kind, conversation_id AS "conversationId",
  chunk_id AS "chunkId", range_start AS "rangeStart", range_end AS "rangeEnd",
  message_ids AS "messageIds", added_by AS "addedBy", occurred_at AS "occurredAt",
  created_at AS "createdAt", story_id AS "storyId", story_chunk_id AS "storyChunkId", page`;

const historyColumns = (h: string) => `${h}.id, ${h}.fact_id AS "factId", ${h}.action,
  ${h}.actor_id AS "actorId", ${h}.content, ${h}.category, ${h}.visibility, ${h}.status,
  ${h}.mention_count AS "mentionCount", ${h}.shared_mention_count AS "sharedMentionCount",
  ${h}.related_fact_id AS "relatedFactId", ${h}.conversation_id AS "conversationId", ${h}.detail,
  ${h}.created_at AS "createdAt"`;

/** Facts scored for the context: this many nearest, this many most mentioned. */
const CONTEXT_POOL = 100;

export interface NewFact {
  legacyId: string;
  authorId: string;
  category: FactCategory;
  content: string;
  normalized: string;
  visibility: FactVisibility;
  status: FactStatus;
  confidence: number;
  sourceConversationId: string | null;
  sourceRangeStart: number | null;
  sourceRangeEnd: number | null;
  sourceMessageIds: string[];
  validFrom: Date;
  validTo: Date | null;
  supersededBy: string | null;
}

export interface NewSource {
  factId: string;
  kind: FactSourceKind;
  conversationId: string | null;
  chunkId: string | null;
  rangeStart: number | null;
  rangeEnd: number | null;
  messageIds: string[];
  addedBy: string | null;
  occurredAt: Date;
  /** A story passage's mention: the story, the passage and its page. */
  storyId?: string | null;
  storyChunkId?: string | null;
  page?: number | null;
}

export interface HistoryExtra {
  actorId?: string | null;
  relatedFactId?: string | null;
  conversationId?: string | null;
  detail?: string | null;
}

export interface FactFilterSql {
  visibility?: FactVisibility | null;
  category?: FactCategory | null;
  authorId?: string | null;
  status?: FactStatus | null;
}

export interface SearchSql {
  text: string;
  vector: QueryVector | null;
  minSimilarity: number;
}

export type RankedFact = FactEntity & { score: number };

/** Rows of an UPDATE ... RETURNING: TypeORM answers [rows, count] for UPDATE. */
function updated<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

/** `%`, `_` and `\` taken literally in ILIKE. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

@Injectable()
export class FactRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async findById(id: string, manager?: EntityManager): Promise<FactEntity | null> {
    const rows: FactEntity[] = await this.m(manager).query(
      `SELECT ${COLUMNS} FROM facts f WHERE f.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** The row, locked until the transaction ends. */
  async lockById(manager: EntityManager, id: string): Promise<FactEntity | null> {
    const rows: FactEntity[] = await manager.query(
      `SELECT ${COLUMNS} FROM facts f WHERE f.id = $1 FOR UPDATE`,
      [id],
    );
    return rows[0] ?? null;
  }

  findByIds(ids: readonly string[]): Promise<FactEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.m().query(`SELECT ${COLUMNS} FROM facts f WHERE f.id = ANY($1::uuid[])`, [ids]);
  }

  /**
   * The facts mentioned in a story or a conversation, and the facts they superseded: those whose
   * view can change when that source goes.
   */
  touchedBySource(
    manager: EntityManager,
    source: { storyId: string } | { conversationId: string },
  ): Promise<FactEntity[]> {
    const [column, id] =
      'storyId' in source
        ? ['story_id', source.storyId]
        : ['conversation_id', source.conversationId];
    return manager.query(
      `WITH hit AS (SELECT DISTINCT fact_id FROM fact_sources WHERE ${column} = $1)
       SELECT ${COLUMNS} FROM facts f
        WHERE f.id IN (SELECT fact_id FROM hit) OR f.superseded_by IN (SELECT fact_id FROM hit)
        ORDER BY f.id`,
      [id],
    );
  }

  /** Serializes fact writes of one member about one legacy (dedupe reads, then writes). */
  async lockAuthor(manager: EntityManager, legacyId: string, authorId: string): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `facts:${legacyId}:${authorId}`,
    ]);
  }

  /** The member's active and deleted facts about the legacy: what a new fact is checked against. */
  comparable(manager: EntityManager, legacyId: string, authorId: string): Promise<FactEntity[]> {
    return manager.query(
      `SELECT ${COLUMNS} FROM facts f
        WHERE f.legacy_id = $1 AND f.author_id = $2 AND f.status IN ('ACTIVE', 'DELETED')
        ORDER BY f.created_at, f.id`,
      [legacyId, authorId],
    );
  }

  /**
   * Cosine similarity of a vector to the member's active and deleted facts, most similar first.
   * An exact scan over that member's facts (not the HNSW index, which filters after the fact).
   */
  async similarities(
    manager: EntityManager,
    legacyId: string,
    authorId: string,
    q: QueryVector,
    limit: number,
  ): Promise<Map<string, number>> {
    const { filter, distance } = denseTerms(q, FACT_KIND, '$1');
    const rows: { id: string; similarity: number }[] = await manager.query(
      `WITH candidates AS MATERIALIZED (
         SELECT f.id, ${distance} AS d FROM facts f
           JOIN embeddings e ON e.item_id = f.id AND ${filter}
          WHERE f.legacy_id = $2 AND f.author_id = $3 AND f.status IN ('ACTIVE', 'DELETED'))
       SELECT id, 1 - d AS similarity FROM candidates ORDER BY d, id LIMIT $4`,
      [vectorText(q.vector), legacyId, authorId, limit],
    );
    return new Map(rows.map((r) => [r.id, Number(r.similarity)]));
  }

  /** A superseded fact of the member that says exactly this, most recently superseded first. */
  async supersededTwin(
    manager: EntityManager,
    legacyId: string,
    authorId: string,
    normalized: string,
  ): Promise<FactEntity | null> {
    const rows: FactEntity[] = await manager.query(
      `SELECT ${COLUMNS} FROM facts f
        WHERE f.legacy_id = $1 AND f.author_id = $2 AND f.normalized = $3
          AND f.status = 'SUPERSEDED'
        ORDER BY f.valid_to DESC, f.id LIMIT 1 FOR UPDATE`,
      [legacyId, authorId, normalized],
    );
    return rows[0] ?? null;
  }

  /** A superseded fact said again: active once more. */
  async reactivate(manager: EntityManager, id: string): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f SET status = 'ACTIVE', valid_to = NULL, superseded_by = NULL,
              updated_at = now()
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    return updated<FactEntity>(result)[0];
  }

  async insert(manager: EntityManager, fact: NewFact): Promise<FactEntity> {
    const rows: FactEntity[] = await manager.query(
      `INSERT INTO facts AS f (legacy_id, author_id, category, content, normalized, visibility,
                               status, confidence, source_conversation_id, source_range_start,
                               source_range_end, source_message_ids, valid_from, valid_to,
                               superseded_by, shared_mention_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::uuid[], $13, $14, $15,
               CASE WHEN $6 = 'SHARED' THEN 1 ELSE 0 END)
       RETURNING ${COLUMNS}`,
      [
        fact.legacyId,
        fact.authorId,
        fact.category,
        fact.content,
        fact.normalized,
        fact.visibility,
        fact.status,
        fact.confidence,
        fact.sourceConversationId,
        fact.sourceRangeStart,
        fact.sourceRangeEnd,
        fact.sourceMessageIds,
        fact.validFrom,
        fact.validTo,
        fact.supersededBy,
      ],
    );
    return rows[0];
  }

  /** Adds a mention; false when this range (or story passage) already gave this fact one. */
  async addSource(manager: EntityManager, source: NewSource): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO fact_sources (fact_id, kind, conversation_id, chunk_id, range_start, range_end,
                                 message_ids, added_by, occurred_at, story_id, story_chunk_id, page)
       VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[], $8, $9, $10, $11, $12)
       ON CONFLICT DO NOTHING
       RETURNING id`,
      [
        source.factId,
        source.kind,
        source.conversationId,
        source.chunkId,
        source.rangeStart,
        source.rangeEnd,
        source.messageIds,
        source.addedBy,
        source.occurredAt,
        source.storyId ?? null,
        source.storyChunkId ?? null,
        source.page ?? null,
      ],
    );
    return rows.length > 0;
  }

  /** One more mention; a stronger statement raises the confidence. */
  async mention(manager: EntityManager, id: string, confidence: number): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f SET mention_count = f.mention_count + 1,
              confidence = GREATEST(f.confidence, $2), updated_at = now()
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id, confidence],
    );
    return updated<FactEntity>(result)[0];
  }

  async supersede(
    manager: EntityManager,
    id: string,
    newerId: string,
    validTo: Date,
  ): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f SET status = 'SUPERSEDED', superseded_by = $2,
              valid_to = GREATEST($3::timestamptz, f.valid_from), updated_at = now()
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id, newerId, validTo],
    );
    return updated<FactEntity>(result)[0];
  }

  /**
   * Carries the older fact's mentions (its sources) over to the fact that restates it with more
   * detail, so the count stays true and deleting a conversation still takes its mentions away.
   */
  async carryMentions(manager: EntityManager, fromId: string, toId: string): Promise<FactEntity> {
    await manager.query(
      `INSERT INTO fact_sources (fact_id, kind, conversation_id, chunk_id, range_start, range_end,
                                 message_ids, added_by, occurred_at, story_id, story_chunk_id, page)
       SELECT $2, kind, conversation_id, chunk_id, range_start, range_end, message_ids, added_by,
              occurred_at, story_id, story_chunk_id, page
         FROM fact_sources WHERE fact_id = $1
       ON CONFLICT DO NOTHING`,
      [fromId, toId],
    );
    const result: unknown = await manager.query(
      `UPDATE facts f SET mention_count = (SELECT count(*) FROM fact_sources s WHERE s.fact_id = f.id),
              shared_mention_count = CASE WHEN f.visibility = 'SHARED'
                THEN (SELECT count(*) FROM fact_sources s WHERE s.fact_id = f.id)
                ELSE f.shared_mention_count END,
              confidence = GREATEST(f.confidence, (SELECT confidence FROM facts WHERE id = $1)),
              updated_at = now()
        WHERE f.id = $2 RETURNING ${COLUMNS}`,
      [fromId, toId],
    );
    return updated<FactEntity>(result)[0];
  }

  async update(
    manager: EntityManager,
    id: string,
    changes: { content: string; normalized: string; category: FactCategory },
  ): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f SET content = $2, normalized = $3, category = $4, updated_at = now()
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id, changes.content, changes.normalized, changes.category],
    );
    return updated<FactEntity>(result)[0];
  }

  async setVisibility(
    manager: EntityManager,
    id: string,
    visibility: FactVisibility,
  ): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f SET visibility = $2, updated_at = now(),
              shared_mention_count = CASE WHEN $2 = 'SHARED' THEN f.mention_count
                                          ELSE f.shared_mention_count END
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id, visibility],
    );
    return updated<FactEntity>(result)[0];
  }

  async softDelete(manager: EntityManager, id: string, actorId: string): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f SET status = 'DELETED', deleted_at = now(), deleted_by = $2, updated_at = now()
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id, actorId],
    );
    return updated<FactEntity>(result)[0];
  }

  /** Back to what it was before the delete: superseded if a newer fact replaced it. */
  async restore(manager: EntityManager, id: string): Promise<FactEntity> {
    const result: unknown = await manager.query(
      `UPDATE facts f
          SET status = CASE WHEN f.superseded_by IS NOT NULL AND f.valid_to IS NOT NULL
                            THEN 'SUPERSEDED' ELSE 'ACTIVE' END,
              valid_to = CASE WHEN f.superseded_by IS NOT NULL THEN f.valid_to END,
              deleted_at = NULL, deleted_by = NULL, updated_at = now()
        WHERE f.id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    return updated<FactEntity>(result)[0];
  }

  async addHistory(
    manager: EntityManager,
    fact: FactEntity,
    action: FactAction,
    extra: HistoryExtra = {},
  ): Promise<void> {
    await manager.query(
      `INSERT INTO fact_history (fact_id, action, actor_id, content, category, visibility, status,
                                 mention_count, related_fact_id, conversation_id, detail,
                                 shared_mention_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        fact.id,
        action,
        extra.actorId ?? null,
        fact.content,
        fact.category,
        fact.visibility,
        fact.status,
        fact.mentionCount,
        extra.relatedFactId ?? null,
        extra.conversationId ?? null,
        extra.detail ?? null,
        fact.sharedMentionCount,
      ],
    );
  }

  /**
   * A fact's entries, oldest first, each with whether `viewerId` may see its related fact and
   * the fact's supersession (what fact-visibility.ts decides other members see of it).
   */
  history(
    factId: string,
    viewerId: string,
  ): Promise<(FactHistoryEntity & { relatedVisible: boolean; supersessionVisible: boolean })[]> {
    return this.m().query(
      `SELECT ${historyColumns('h')},
              COALESCE((SELECT ${visibleSql('r', '$2')} FROM facts r WHERE r.id = h.related_fact_id),
                       false) AS "relatedVisible",
              (SELECT ${supersessionVisibleSql('f', '$2')} FROM facts f WHERE f.id = h.fact_id)
                AS "supersessionVisible"
         FROM fact_history h
        WHERE h.fact_id = $1
        ORDER BY h.created_at, h.id`,
      [factId, viewerId],
    );
  }

  /** Deleted facts whose grace period ended before `before`, oldest first. */
  async purgeable(before: Date, limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.m().query(
      `SELECT id FROM facts WHERE status = 'DELETED' AND deleted_at < $1
        ORDER BY deleted_at, id LIMIT $2`,
      [before, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Removes a deleted fact for good, if it is still deleted and past `before`: its row, sources
   * and history go with it (cascade), its vectors by trigger, and what other facts' history
   * quoted of it. False when a restore got there first.
   */
  async purge(manager: EntityManager, id: string, before: Date): Promise<boolean> {
    const locked: unknown[] = await manager.query(
      `SELECT id FROM facts WHERE id = $1 AND status = 'DELETED' AND deleted_at < $2 FOR UPDATE`,
      [id, before],
    );
    if (locked.length === 0) return false;
    // Entries about it stay in the other fact's history for its author only, without its words.
    await manager.query(
      `UPDATE fact_history
          SET detail = CASE WHEN detail IS NULL THEN NULL
                            ELSE 'Related to a fact that has since been deleted.' END,
              visibility = 'PRIVATE'
        WHERE related_fact_id = $1`,
      [id],
    );
    await manager.query(`DELETE FROM facts WHERE id = $1`, [id]);
    return true;
  }

  /** The author's facts (not deleted) in legacies they are no longer a member of, newest first. */
  pageLeftBehind(
    authorId: string,
    memberOf: string[],
    limit: number,
    after?: (string | number)[],
  ): Promise<(FactEntity & { cursorKey: string })[]> {
    const p = new SqlParams();
    const cursor = after
      ? `AND (f.created_at, f.id) < (${p.add(after[0])}::timestamptz, ${p.add(after[1])}::uuid)`
      : '';
    return this.m().query(
      `SELECT ${COLUMNS}, f.created_at::text AS "cursorKey" FROM facts f
        WHERE f.author_id = ${p.add(authorId)} AND f.status <> 'DELETED'
          AND f.legacy_id <> ALL(${p.add(memberOf)}::uuid[]) ${cursor}
        ORDER BY f.created_at DESC, f.id DESC LIMIT ${p.add(limit)}`,
      p.values,
    );
  }

  /** The facts `id` superseded. */
  supersededBy(manager: EntityManager, id: string): Promise<FactEntity[]> {
    return manager.query(
      `SELECT ${COLUMNS} FROM facts f WHERE f.superseded_by = $1 ORDER BY f.id`,
      [id],
    );
  }

  /** The facts among `ids` that the viewer may see, as they see them. */
  findForViewer(ids: readonly string[], viewerId: string): Promise<FactEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.m().query(
      `SELECT ${viewerColumnsSql('$2')} FROM facts f
        WHERE f.id = ANY($1::uuid[]) AND ${visibleSql('f', '$2')}`,
      [ids, viewerId],
    );
  }

  sourcesOf(factIds: readonly string[]): Promise<FactSourceEntity[]> {
    if (factIds.length === 0) return Promise.resolve([]);
    return this.m().query(
      `SELECT ${SOURCE_COLUMNS} FROM fact_sources WHERE fact_id = ANY($1::uuid[])
        ORDER BY created_at, id`,
      [factIds],
    );
  }

  /**
   * A page of the facts `viewerId` may see in a legacy. Without a search: newest first, cursor
   * (created_at, id). With one: facts matching by keywords (full text, substring, trigram word
   * similarity) or by meaning (cosine to the query vector), best first, cursor (score, id).
   */
  async page(
    legacyId: string,
    viewerId: string,
    filter: FactFilterSql,
    limit: number,
    after: (string | number)[] | undefined,
    search: SearchSql | null,
  ): Promise<(FactEntity & { cursorKey: string | number })[]> {
    const p = new SqlParams(legacyId, viewerId);
    const where = [`f.legacy_id = $1`, visibleSql('f', '$2')];
    where.push(`${statusSql('f', '$2')} = ${p.add(filter.status ?? FactStatus.ACTIVE)}`);
    if (filter.visibility) where.push(`f.visibility = ${p.add(filter.visibility)}`);
    if (filter.category) where.push(`f.category = ${p.add(filter.category)}`);
    if (filter.authorId) where.push(`f.author_id = ${p.add(filter.authorId)}::uuid`);

    if (!search) {
      if (after)
        where.push(
          `(f.created_at, f.id) < (${p.add(after[0])}::timestamptz, ${p.add(after[1])}::uuid)`,
        );
      return this.m().query(
        `SELECT ${viewerColumnsSql('$2')}, f.created_at::text AS "cursorKey" FROM facts f
          WHERE ${where.join(' AND ')}
          ORDER BY f.created_at DESC, f.id DESC LIMIT ${p.add(limit)}`,
        p.values,
      );
    }
    const text = p.add(search.text);
    const lexical = `GREATEST(word_similarity(${text}, f.content),
                              CASE WHEN f.search_tsv @@ websearch_to_tsquery('simple', ${text})
                                     OR f.content ILIKE '%' || ${p.add(likeEscape(search.text))} || '%'
                                   THEN 1 ELSE 0 END)`;
    let join = '';
    let dense = 'NULL::float8';
    if (search.vector) {
      const terms = denseTerms(search.vector, FACT_KIND, p.add(vectorText(search.vector.vector)));
      join = `LEFT JOIN embeddings e ON e.item_id = f.id AND ${terms.filter}`;
      dense = `(1 - ${terms.distance})`;
    }
    const minSimilarity = p.add(search.minSimilarity);
    const cursor = after
      ? `WHERE (score, id) < (${p.add(Number(after[0]))}::float8, ${p.add(after[1])}::uuid)`
      : '';
    return this.m().query(
      `WITH matched AS (
         SELECT ${viewerColumnsSql('$2')}, ${lexical} AS lexical, ${dense} AS dense
           FROM facts f ${join}
          WHERE ${where.join(' AND ')}),
       best AS (SELECT max(dense) AS top FROM matched),
       scored AS (
         SELECT matched.*, (0.6 * COALESCE(dense, 0) + 0.4 * lexical)::float8 AS score
           FROM matched, best
          WHERE lexical >= 0.6
             OR (dense >= ${minSimilarity} AND dense >= best.top - ${MEANING_MARGIN}))
       SELECT *, score AS "cursorKey" FROM scored ${cursor}
        ORDER BY score DESC, id DESC LIMIT ${p.add(limit)}`,
      p.values,
    );
  }

  /**
   * The legacy's active facts the viewer may see, for the agent's context: most relevant to the
   * query and most mentioned first. With a query vector only a pool is scored: the nearest
   * CONTEXT_POOL (HNSW, iterative scan past other legacies' vectors) and the CONTEXT_POOL most
   * mentioned and confident; word similarity then ranks within it. Scoring every fact cost 60 ms
   * at 1,000 facts on the embedded database, and so did adding trigram matches of the whole
   * message to the pool (a long message shares trigrams with nearly every fact); the pool alone
   * costs 24 ms. A fact outside it cannot reach the few places the context has.
   */
  async forContext(
    legacyId: string,
    viewerId: string,
    query: string,
    vector: QueryVector | null,
    limit: number,
  ): Promise<(RankedFact & { dense: number | null; lexical: number; mentions: number })[]> {
    // $1 to $4 are shared by both variants below.
    const p = new SqlParams(legacyId, viewerId, query, limit);
    const scoredSql = (dense: string, join: string, where: string) =>
      `WITH visible AS (
         SELECT ${viewerColumnsSql('$2')}, ${dense} AS dense,
                CASE WHEN $3 = '' THEN 0 ELSE word_similarity($3, f.content) END AS lexical,
                LEAST(ln(GREATEST(${mentionCountSql('f', '$2')}, 1)::float8) / ln(10), 1) AS mentions
           FROM facts f ${join}
          WHERE ${where})
       SELECT *, (0.55 * COALESCE(dense, lexical) + 0.15 * lexical + 0.2 * mentions
                  + 0.1 * confidence)::float8 AS score
         FROM visible ORDER BY score DESC, id LIMIT $4`;
    const inScope = `f.legacy_id = $1 AND ${activeForSql('f', '$2')}`;
    if (!vector) return this.m().query(scoredSql('NULL::float8', '', inScope), p.values);

    const terms = denseTerms(vector, FACT_KIND, p.add(vectorText(vector.vector)));
    const poolSize = p.add(Math.max(CONTEXT_POOL, limit));
    const pool = `f.id IN (
         (SELECT f.id FROM embeddings e JOIN facts f ON f.id = e.item_id
           WHERE ${terms.filter} AND ${inScope}
           ORDER BY ${terms.distance} LIMIT ${poolSize})
         UNION
         (SELECT f.id FROM facts f WHERE ${inScope}
           ORDER BY ${mentionCountSql('f', '$2')} DESC, f.confidence DESC, f.id LIMIT ${poolSize}))`;
    return this.dataSource.transaction(async (m) => {
      await m.query(
        `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
                set_config('hnsw.ef_search', $1, true)`,
        [String(Math.min(1000, Math.max(40, CONTEXT_POOL)))],
      );
      return m.query(
        scoredSql(
          `(1 - ${terms.distance})`,
          `LEFT JOIN embeddings e ON e.item_id = f.id AND ${terms.filter}`,
          `${inScope} AND ${pool}`,
        ),
        p.values,
      );
    });
  }
}
