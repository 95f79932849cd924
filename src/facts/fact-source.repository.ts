import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { FactSourceEntity } from './fact.entity.js';
import { FactSourceKind } from './fact.enums.js';
import { raw, run, sql } from '../database/sql.js';

const SOURCE_COLUMNS = raw(`id, fact_id AS "factId", kind, conversation_id AS "conversationId",
  chunk_id AS "chunkId", range_start AS "rangeStart", range_end AS "rangeEnd",
  message_ids AS "messageIds", added_by AS "addedBy", occurred_at AS "occurredAt",
  created_at AS "createdAt", story_id AS "storyId", story_chunk_id AS "storyChunkId", page`);

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
    const rows: unknown[] = await run(
      manager,
      sql`INSERT INTO fact_sources (fact_id, kind, conversation_id, chunk_id, range_start, range_end,
                                 message_ids, added_by, occurred_at, story_id, story_chunk_id, page)
       VALUES (${source.factId}, ${source.kind}, ${source.conversationId}, ${source.chunkId},
         ${source.rangeStart}, ${source.rangeEnd}, ${source.messageIds}::uuid[], ${source.addedBy},
         ${source.occurredAt}, ${source.storyId ?? null}, ${source.storyChunkId ?? null},
         ${source.page ?? null})
       ON CONFLICT DO NOTHING
       RETURNING id`,
    );
    return rows.length > 0;
  }

  /**
   * Copies `fromId`'s mentions to `toId`, those it does not have yet: so that deleting a
   * conversation still takes its mentions away from the fact that took them over.
   */
  async carryOver(manager: EntityManager, fromId: string, toId: string): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO fact_sources (fact_id, kind, conversation_id, chunk_id, range_start, range_end,
                                 message_ids, added_by, occurred_at, story_id, story_chunk_id, page)
       SELECT ${toId}, kind, conversation_id, chunk_id, range_start, range_end, message_ids, added_by,
              occurred_at, story_id, story_chunk_id, page
         FROM fact_sources WHERE fact_id = ${fromId}
       ON CONFLICT DO NOTHING`,
    );
  }

  /** Every mention of these facts, oldest first. */
  ofFacts(factIds: readonly string[]): Promise<FactSourceEntity[]> {
    if (factIds.length === 0) return Promise.resolve([]);
    return run(
      this.dataSource.manager,
      sql`SELECT ${SOURCE_COLUMNS} FROM fact_sources WHERE fact_id = ANY(${factIds}::uuid[])
        ORDER BY created_at, id`,
    );
  }
}
