import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { denseTerms, similaritySql } from '../embeddings/vector-sql.js';
import { familySeesSql, sharedCountOnVisibilitySql } from './fact-visibility.js';
import { FactEntity } from './fact.entity.js';
import { FactCategory, FactStatus, FactVisibility } from './fact.enums.js';
import { raw, run, sql } from '../database/sql.js';

export const FACT_KIND = 'fact';

/** Every column as stored, as FactEntity fields; viewerColumnsSql is what another member sees. */
export const FACT_COLUMNS =
  raw(`f.id, f.legacy_id AS "legacyId", f.author_id AS "authorId", f.category, f.content,
  f.normalized, f.visibility, f.status, f.confidence, f.mention_count AS "mentionCount",
  f.shared_mention_count AS "sharedMentionCount", f.source_conversation_id AS "sourceConversationId", f.source_range_start AS "sourceRangeStart",
  f.source_range_end AS "sourceRangeEnd", f.source_message_ids AS "sourceMessageIds",
  f.valid_from AS "validFrom", f.valid_to AS "validTo", f.superseded_by AS "supersededBy",
  f.deleted_at AS "deletedAt", f.deleted_by AS "deletedBy", f.created_at AS "createdAt",
  f.updated_at AS "updatedAt", f.shared_confidence AS "sharedConfidence",
  f.shared_updated_at AS "sharedUpdatedAt"`);

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

/**
 * The `facts` rows as stored, for writers: reads and locks by id, what a new fact is compared
 * with, and each change to a row. What a viewer sees of facts is VisibleFactRepository's.
 */
@Injectable()
export class FactRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async findById(id: string, manager?: EntityManager): Promise<FactEntity | null> {
    const rows: FactEntity[] = await run(
      this.m(manager),
      sql`SELECT ${FACT_COLUMNS} FROM facts f WHERE f.id = ${id}`,
    );
    return rows[0] ?? null;
  }

  /** The row, locked until the transaction ends. */
  async lockById(manager: EntityManager, id: string): Promise<FactEntity | null> {
    const rows: FactEntity[] = await run(
      manager,
      sql`SELECT ${FACT_COLUMNS} FROM facts f WHERE f.id = ${id} FOR UPDATE`,
    );
    return rows[0] ?? null;
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
    return run(
      manager,
      sql`WITH hit AS (SELECT DISTINCT fact_id FROM fact_sources WHERE ${raw(column)} = ${id})
       SELECT ${FACT_COLUMNS} FROM facts f
        WHERE f.id IN (SELECT fact_id FROM hit) OR f.superseded_by IN (SELECT fact_id FROM hit)
        ORDER BY f.id`,
    );
  }

  /** The facts `id` superseded. */
  supersededBy(manager: EntityManager, id: string): Promise<FactEntity[]> {
    return run(
      manager,
      sql`SELECT ${FACT_COLUMNS} FROM facts f WHERE f.superseded_by = ${id} ORDER BY f.id`,
    );
  }

  /** Serializes fact writes of one member about one legacy (dedupe reads, then writes). */
  async lockAuthor(manager: EntityManager, legacyId: string, authorId: string): Promise<void> {
    const key = `facts:${legacyId}:${authorId}`;
    await run(manager, sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
  }

  /** The member's active and deleted facts about the legacy: what a new fact is checked against. */
  comparable(manager: EntityManager, legacyId: string, authorId: string): Promise<FactEntity[]> {
    return run(
      manager,
      sql`SELECT ${FACT_COLUMNS} FROM facts f
        WHERE f.legacy_id = ${legacyId} AND f.author_id = ${authorId} AND f.status IN ('ACTIVE', 'DELETED')
        ORDER BY f.created_at, f.id`,
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
    const { filter, distance } = denseTerms(q, FACT_KIND);
    const rows: { id: string; similarity: number }[] = await run(
      manager,
      sql`WITH candidates AS MATERIALIZED (
         SELECT f.id, ${distance} AS d FROM facts f
           JOIN embeddings e ON e.item_id = f.id AND ${filter}
          WHERE f.legacy_id = ${legacyId} AND f.author_id = ${authorId} AND f.status IN ('ACTIVE', 'DELETED'))
       SELECT id, ${similaritySql(q.model, raw('d'))} AS similarity FROM candidates ORDER BY d, id LIMIT ${limit}`,
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
    const rows: FactEntity[] = await run(
      manager,
      sql`SELECT ${FACT_COLUMNS} FROM facts f
        WHERE f.legacy_id = ${legacyId} AND f.author_id = ${authorId} AND f.normalized = ${normalized}
          AND f.status = 'SUPERSEDED'
        ORDER BY f.valid_to DESC, f.id LIMIT 1 FOR UPDATE`,
    );
    return rows[0] ?? null;
  }

  /** A superseded fact said again: active once more. */
  async reactivate(manager: EntityManager, id: string): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET status = 'ACTIVE', valid_to = NULL, superseded_by = NULL,
              updated_at = now()
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  async insert(manager: EntityManager, fact: NewFact): Promise<FactEntity> {
    const rows: FactEntity[] = await run(
      manager,
      sql`INSERT INTO facts AS f (legacy_id, author_id, category, content, normalized, visibility,
                               status, confidence, source_conversation_id, source_range_start,
                               source_range_end, source_message_ids, valid_from, valid_to,
                               superseded_by, shared_mention_count)
       VALUES (${fact.legacyId}, ${fact.authorId}, ${fact.category}, ${fact.content},
         ${fact.normalized}, ${fact.visibility}, ${fact.status}, ${fact.confidence},
         ${fact.sourceConversationId}, ${fact.sourceRangeStart}, ${fact.sourceRangeEnd},
         ${fact.sourceMessageIds}::uuid[], ${fact.validFrom}, ${fact.validTo}, ${fact.supersededBy},
               ${sharedCountOnVisibilitySql(sql`${fact.visibility}`, sql`1`, sql`0`)})
       RETURNING ${FACT_COLUMNS}`,
    );
    return rows[0];
  }

  /** One more mention; a stronger statement raises the confidence. */
  async mention(manager: EntityManager, id: string, confidence: number): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET mention_count = f.mention_count + 1,
              confidence = GREATEST(f.confidence, ${confidence}), updated_at = now()
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  /**
   * Counts `toId`'s mentions again from its sources, once `fromId`'s were carried over to it
   * (FactSourceRepository.carryOver), and keeps the stronger confidence of the two. The family's
   * count and confidence (fact-visibility.ts) take only what they saw of `fromId`: a private
   * fact's mentions, and later ones of a shared fact, are its author's.
   */
  async recountMentions(manager: EntityManager, fromId: string, toId: string): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET mention_count = (SELECT count(*) FROM fact_sources s WHERE s.fact_id = f.id),
              shared_mention_count = CASE WHEN f.visibility <> 'SHARED' THEN f.shared_mention_count
                ELSE LEAST(f.shared_mention_count + COALESCE((
                       SELECT o.shared_mention_count FROM facts o WHERE o.id = ${fromId}
                          AND ${familySeesSql('o')}), 0),
                     (SELECT count(*) FROM fact_sources s WHERE s.fact_id = f.id)) END,
              shared_confidence = CASE WHEN f.visibility <> 'SHARED' THEN f.shared_confidence
                ELSE GREATEST(f.shared_confidence, COALESCE((
                       SELECT o.shared_confidence FROM facts o WHERE o.id = ${fromId}
                          AND ${familySeesSql('o')}), 0)) END,
              confidence = GREATEST(f.confidence, (SELECT confidence FROM facts WHERE id = ${fromId})),
              updated_at = now()
        WHERE f.id = ${toId} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  async supersede(
    manager: EntityManager,
    id: string,
    newerId: string,
    validTo: Date,
  ): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET status = 'SUPERSEDED', superseded_by = ${newerId},
              valid_to = GREATEST(${validTo}::timestamptz, f.valid_from), updated_at = now()
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  async update(
    manager: EntityManager,
    id: string,
    changes: { content: string; normalized: string; category: FactCategory },
  ): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET content = ${changes.content}, normalized = ${changes.normalized}, category = ${changes.category}, updated_at = now()
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  async setVisibility(
    manager: EntityManager,
    id: string,
    visibility: FactVisibility,
  ): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET visibility = ${visibility}, updated_at = now(),
              shared_mention_count = ${sharedCountOnVisibilitySql(sql`${visibility}`, sql`f.mention_count`, sql`f.shared_mention_count`)}
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  async softDelete(manager: EntityManager, id: string, actorId: string): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f SET status = 'DELETED', deleted_at = now(), deleted_by = ${actorId}, updated_at = now()
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  /** Back to what it was before the delete: superseded if a newer fact replaced it. */
  async restore(manager: EntityManager, id: string): Promise<FactEntity> {
    const [row] = await run<FactEntity>(
      manager,
      sql`UPDATE facts f
          SET status = CASE WHEN f.superseded_by IS NOT NULL AND f.valid_to IS NOT NULL
                            THEN 'SUPERSEDED' ELSE 'ACTIVE' END,
              valid_to = CASE WHEN f.superseded_by IS NOT NULL THEN f.valid_to END,
              deleted_at = NULL, deleted_by = NULL, updated_at = now()
        WHERE f.id = ${id} RETURNING ${FACT_COLUMNS}`,
    );
    return row;
  }

  /** Deleted facts whose grace period ended before `before`, oldest first. */
  async purgeable(before: Date, limit: number): Promise<string[]> {
    const rows: { id: string }[] = await run(
      this.m(),
      sql`SELECT id FROM facts WHERE status = 'DELETED' AND deleted_at < ${before}
        ORDER BY deleted_at, id LIMIT ${limit}`,
    );
    return rows.map((r) => r.id);
  }

  /** Locks a deleted fact past `before`; false when a restore got there first. */
  async lockPurgeable(manager: EntityManager, id: string, before: Date): Promise<boolean> {
    const locked: unknown[] = await run(
      manager,
      sql`SELECT id FROM facts WHERE id = ${id} AND status = 'DELETED' AND deleted_at < ${before} FOR UPDATE`,
    );
    return locked.length > 0;
  }

  /** Removes the row for good: its sources and history go with it (cascade), its vectors by trigger. */
  async remove(manager: EntityManager, id: string): Promise<void> {
    await run(manager, sql`DELETE FROM facts WHERE id = ${id}`);
  }
}
