import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { FactSourceEntity } from './fact.entity.js';
import { FactSourceKind } from './fact.enums.js';

const SOURCE_COLUMNS = `id, fact_id AS "factId", kind, conversation_id AS "conversationId",
  chunk_id AS "chunkId", range_start AS "rangeStart", range_end AS "rangeEnd",
  message_ids AS "messageIds", added_by AS "addedBy", occurred_at AS "occurredAt",
  created_at AS "createdAt", story_id AS "storyId", story_chunk_id AS "storyChunkId", page`;

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

/** `fact_sources`: each mention of a fact, what its mention count counts. */
@Injectable()
export class FactSourceRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Adds a mention; false when this range (or story passage) already gave this fact one. */
  async add(manager: EntityManager, source: NewSource): Promise<boolean> {
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

  /**
   * Copies `fromId`'s mentions to `toId`, those it does not have yet: so that deleting a
   * conversation still takes its mentions away from the fact that took them over.
   */
  async carryOver(manager: EntityManager, fromId: string, toId: string): Promise<void> {
    await manager.query(
      `INSERT INTO fact_sources (fact_id, kind, conversation_id, chunk_id, range_start, range_end,
                                 message_ids, added_by, occurred_at, story_id, story_chunk_id, page)
       SELECT $2, kind, conversation_id, chunk_id, range_start, range_end, message_ids, added_by,
              occurred_at, story_id, story_chunk_id, page
         FROM fact_sources WHERE fact_id = $1
       ON CONFLICT DO NOTHING`,
      [fromId, toId],
    );
  }

  /** Every mention of these facts, oldest first. */
  ofFacts(factIds: readonly string[]): Promise<FactSourceEntity[]> {
    if (factIds.length === 0) return Promise.resolve([]);
    return this.dataSource.manager.query(
      `SELECT ${SOURCE_COLUMNS} FROM fact_sources WHERE fact_id = ANY($1::uuid[])
        ORDER BY created_at, id`,
      [factIds],
    );
  }
}
