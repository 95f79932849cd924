import { DatabaseReads } from '../database/database-reads.js';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { coversAnsweredAloneSql } from '../conversations/withheld-reply.js';
import type { MessageRole } from '../conversations/message-role.enum.js';
import type { StructuredSummary } from '../llm/language-model.js';
import { ConversationChunkEntity } from './conversation-chunk.entity.js';
import { run, sql } from '../database/sql.js';

export const SUMMARY_KIND = 'summary';

const COLUMNS = sql`k.id, k.conversation_id AS "conversationId", k.legacy_id AS "legacyId",
  k.user_id AS "userId", k.range_start AS "rangeStart", k.range_end AS "rangeEnd", k.content,
  k.structured, k.turn_count AS "turnCount", k.token_count AS "tokenCount", k.model,
  k.prompt_version AS "promptVersion", k.first_occurred_at AS "firstOccurredAt",
  k.last_occurred_at AS "lastOccurredAt", k.created_at AS "createdAt",
  ${coversAnsweredAloneSql('k')} AS "answeredAlone"`;

/**
 * The first turn of conversation `c` that no summary and no set-aside range covers: work goes
 * on after a range the model could not summarize.
 */
const NEXT_START = sql`GREATEST(
  COALESCE((SELECT max(k.range_end) + 1 FROM conversation_chunks k WHERE k.conversation_id = c.id), 0),
  COALESCE((SELECT max(s.range_end) + 1 FROM summary_set_asides s WHERE s.conversation_id = c.id), 0))`;

/** A range of turns set aside: the model could not summarize it (summary_set_asides). */
export interface SetAsideRange {
  conversationId: string;
  rangeStart: number;
  rangeEnd: number;
  error: string;
}

/** How far a conversation is summarized. */
export interface SummaryProgress {
  conversationId: string;
  legacyId: string;
  userId: string;
  /** Turns stored so far. */
  turnCount: number;
  /** The first turn no chunk covers yet. */
  nextStart: number;
}

export interface ChunkTurn {
  id: string;
  turnIndex: number;
  role: MessageRole;
  content: string;
  occurredAt: Date;
  /** A notice, not part of the conversation (MessageEntity.placeholder): never summarized. */
  placeholder: boolean;
  /** Who said it (a user turn), or whom the agent answered (an assistant turn). */
  userId: string;
}

export interface NewChunk {
  conversationId: string;
  legacyId: string;
  userId: string;
  rangeStart: number;
  rangeEnd: number;
  content: string;
  structured: StructuredSummary;
  turnCount: number;
  tokenCount: number;
  model: string;
  promptVersion: string | null;
  firstOccurredAt: Date;
  lastOccurredAt: Date;
}

@Injectable()
export class ConversationChunkRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reads: DatabaseReads,
  ) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async progress(conversationId: string, manager?: EntityManager): Promise<SummaryProgress | null> {
    const rows: SummaryProgress[] = await run(
      this.m(manager),
      sql`SELECT c.id AS "conversationId", c.legacy_id AS "legacyId", c.user_id AS "userId",
              c.next_turn_index AS "turnCount", ${NEXT_START} AS "nextStart"
         FROM conversations c WHERE c.id = ${conversationId}`,
    );
    return rows[0] ? { ...rows[0], nextStart: Number(rows[0].nextStart) } : null;
  }

  /** Unsummarized turns of each conversation (0 for unknown ids). */
  async pendingTurns(conversationIds: readonly string[]): Promise<Map<string, number>> {
    if (conversationIds.length === 0) return new Map();
    const rows: { id: string; pending: string }[] = await run(
      this.m(),
      sql`SELECT c.id, c.next_turn_index - ${NEXT_START} AS pending
         FROM conversations c WHERE c.id = ANY(${conversationIds}::uuid[])`,
    );
    return new Map(rows.map((r) => [r.id, Number(r.pending)]));
  }

  /** A member's conversation summaries in a legacy that overlap [from, to), oldest first. */
  chunksBetween(
    userId: string,
    legacyId: string,
    from: Date,
    to: Date,
  ): Promise<ConversationChunkEntity[]> {
    return run(
      this.m(),
      sql`SELECT id, conversation_id AS "conversationId", legacy_id AS "legacyId", user_id AS "userId",
              range_start AS "rangeStart", range_end AS "rangeEnd", content, structured,
              turn_count AS "turnCount", token_count AS "tokenCount", model,
              prompt_version AS "promptVersion", first_occurred_at AS "firstOccurredAt",
              last_occurred_at AS "lastOccurredAt", created_at AS "createdAt"
         FROM conversation_chunks
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND last_occurred_at >= ${from} AND first_occurred_at < ${to}
        ORDER BY first_occurred_at, id`,
    );
  }

  /**
   * A member's turns in a legacy said in [from, to) that no summary covers yet (after the
   * last summarized turn of their conversation), notices left out, oldest first.
   */
  unsummarizedBetween(
    userId: string,
    legacyId: string,
    from: Date,
    to: Date,
    limit: number,
  ): Promise<(ChunkTurn & { conversationId: string })[]> {
    return run(
      this.m(),
      sql`SELECT m.id, m.conversation_id AS "conversationId", m.turn_index AS "turnIndex", m.role,
              m.content, m.occurred_at AS "occurredAt", m.placeholder
         FROM messages m
        WHERE m.user_id = ${userId} AND m.legacy_id = ${legacyId} AND m.occurred_at >= ${from} AND m.occurred_at < ${to}
          AND NOT m.placeholder
          AND (m.turn_index > COALESCE(
                 (SELECT max(k.range_end) FROM conversation_chunks k
                   WHERE k.conversation_id = m.conversation_id), -1)
               OR EXISTS (SELECT 1 FROM summary_set_asides s
                           WHERE s.conversation_id = m.conversation_id
                             AND m.turn_index BETWEEN s.range_start AND s.range_end))
        ORDER BY m.occurred_at, m.turn_index
        LIMIT ${limit}`,
    );
  }

  /** Serializes summarization of one conversation without blocking its appends. */
  async lock(manager: EntityManager, conversationId: string): Promise<void> {
    const key = `summaries:${conversationId}`;
    await run(manager, sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
  }

  /** Turns `start..end` (inclusive), in order. */
  turns(conversationId: string, start: number, end: number): Promise<ChunkTurn[]> {
    return run(
      this.m(),
      sql`SELECT id, turn_index AS "turnIndex", role, content, occurred_at AS "occurredAt", placeholder,
              user_id AS "userId"
         FROM messages WHERE conversation_id = ${conversationId} AND turn_index BETWEEN ${start} AND ${end}
        ORDER BY turn_index`,
    );
  }

  /** The new chunk, or null when this range (or one starting there) is already summarized. */
  async insert(manager: EntityManager, chunk: NewChunk): Promise<ConversationChunkEntity | null> {
    const rows: ConversationChunkEntity[] = await run(
      manager,
      sql`INSERT INTO conversation_chunks AS k (conversation_id, legacy_id, user_id, range_start,
                                             range_end, content, structured, turn_count,
                                             token_count, model, prompt_version,
                                             first_occurred_at, last_occurred_at)
       VALUES (${chunk.conversationId}, ${chunk.legacyId}, ${chunk.userId}, ${chunk.rangeStart},
         ${chunk.rangeEnd}, ${chunk.content}, ${JSON.stringify(chunk.structured)}, ${chunk.turnCount},
         ${chunk.tokenCount}, ${chunk.model}, ${chunk.promptVersion}, ${chunk.firstOccurredAt},
         ${chunk.lastOccurredAt})
       ON CONFLICT DO NOTHING
       RETURNING ${COLUMNS}`,
    );
    return rows[0] ?? null;
  }

  /** Chunks of each conversation, in range order. */
  async forConversations(conversationIds: readonly string[]): Promise<ConversationChunkEntity[]> {
    if (conversationIds.length === 0) return [];
    return run(
      await this.reads.source(),
      sql`SELECT ${COLUMNS} FROM conversation_chunks k WHERE k.conversation_id = ANY(${conversationIds}::uuid[])
        ORDER BY k.conversation_id, k.range_start`,
    );
  }

  /** Chunks by id, for retrieval. Callers scope them to what the viewer may see. */
  findByIds(ids: readonly string[]): Promise<ConversationChunkEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return run(
      this.m(),
      sql`SELECT ${COLUMNS} FROM conversation_chunks k WHERE k.id = ANY(${ids}::uuid[])`,
    );
  }

  /** Sets a range aside; false when it was already (another worker got there first). */
  async setAside(manager: EntityManager, range: SetAsideRange): Promise<boolean> {
    const rows: unknown[] = await run(
      manager,
      sql`INSERT INTO summary_set_asides (conversation_id, range_start, range_end, error)
       VALUES (${range.conversationId}, ${range.rangeStart}, ${range.rangeEnd}, ${range.error.slice(0, 2000)})
       ON CONFLICT DO NOTHING RETURNING range_start`,
    );
    return rows.length > 0;
  }

  /** The set-aside range starting at `rangeStart`, locked until the transaction ends. */
  async setAsideForUpdate(
    manager: EntityManager,
    conversationId: string,
    rangeStart: number,
  ): Promise<SetAsideRange | null> {
    const rows: SetAsideRange[] = await run(
      manager,
      sql`SELECT conversation_id AS "conversationId", range_start AS "rangeStart",
              range_end AS "rangeEnd", error
         FROM summary_set_asides
        WHERE conversation_id = ${conversationId} AND range_start = ${rangeStart} FOR UPDATE`,
    );
    return rows[0] ?? null;
  }

  async clearSetAside(manager: EntityManager, conversationId: string, rangeStart: number) {
    await run(
      manager,
      sql`DELETE FROM summary_set_asides WHERE conversation_id = ${conversationId} AND range_start = ${rangeStart}`,
    );
  }

  /** A conversation's set-aside ranges, in order. */
  setAsides(conversationId: string): Promise<SetAsideRange[]> {
    return run(
      this.m(),
      sql`SELECT conversation_id AS "conversationId", range_start AS "rangeStart",
              range_end AS "rangeEnd", error
         FROM summary_set_asides WHERE conversation_id = ${conversationId} ORDER BY range_start`,
    );
  }

  /** Conversations holding more than `threshold` unsummarized turns, most behind first. */
  overThreshold(threshold: number, limit: number): Promise<{ id: string; pending: number }[]> {
    return run(
      this.m(),
      sql`SELECT id, pending FROM (
         SELECT c.id, c.next_turn_index - ${NEXT_START} AS pending
           FROM conversations c WHERE c.next_turn_index > ${threshold}) p
        WHERE pending > ${threshold} ORDER BY pending DESC, id LIMIT ${limit}`,
    );
  }
}
