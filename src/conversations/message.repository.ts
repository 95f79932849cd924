import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MessageRole } from './message-role.enum.js';
import { MessageEntity } from './message.entity.js';
import { join, raw, run, sql } from '../database/sql.js';

export interface NewMessage {
  conversationId: string;
  legacyId: string;
  userId: string;
  turnIndex: number;
  role: MessageRole;
  content: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
  clientMessageId: string | null;
  occurredAt: Date | null;
  placeholder?: boolean;
  answeredAlone?: boolean;
}

const COLUMNS =
  raw(`id, conversation_id AS "conversationId", legacy_id AS "legacyId", user_id AS "userId",
  turn_index AS "turnIndex", role, content, token_count AS "tokenCount", metadata,
  client_message_id AS "clientMessageId", created_at AS "createdAt", occurred_at AS "occurredAt",
  placeholder, answered_alone AS "answeredAlone"`);

@Injectable()
export class MessageRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /**
   * Appends a turn at its conversation's next index, in one statement (the counter and the turn
   * were two round trips, with a third between them for a participant's turn). The counter is
   * bumped under the conversation's row lock, so concurrent appends queue there and indexes
   * never collide or leave gaps. With `writerTakesPart`, the turn is stored only if its writer
   * still takes part, read after that lock: their participation row is locked too, so a leave
   * committed while this waited is seen (leaving takes the conversation's lock first, as this
   * does, so the two never wait on each other crosswise). Null when the conversation is gone or
   * its writer no longer takes part; the counter is then bumped for nothing, so the caller rolls
   * the transaction back.
   */
  async appendNext(
    manager: EntityManager,
    message: Omit<NewMessage, 'turnIndex'>,
    writerTakesPart: boolean,
  ): Promise<MessageEntity | null> {
    const rows: MessageEntity[] = await run(
      manager,
      sql`WITH counter AS (
         UPDATE conversations
            SET next_turn_index = next_turn_index + 1, last_activity_at = now(), updated_at = now()
          WHERE id = ${message.conversationId}
          RETURNING id, next_turn_index - 1 AS turn
       ),
       writer AS (
         SELECT c.turn FROM counter c WHERE NOT ${writerTakesPart}::boolean
         UNION ALL
         SELECT c.turn FROM counter c
          CROSS JOIN LATERAL (
            SELECT 1 FROM conversation_participants p
             WHERE p.conversation_id = c.id AND p.user_id = ${message.userId} AND p.left_at IS NULL
               FOR SHARE) taking_part
          WHERE ${writerTakesPart}::boolean
       )
       INSERT INTO messages (conversation_id, legacy_id, user_id, turn_index, role, content,
                             token_count, metadata, client_message_id, occurred_at, placeholder,
                             answered_alone)
       SELECT ${message.conversationId}, ${message.legacyId},
         ${message.userId}, w.turn, ${message.role}, ${message.content}, ${message.tokenCount},
         ${JSON.stringify(message.metadata)},
         ${message.clientMessageId}, COALESCE(${message.occurredAt}, now()), ${message.placeholder ?? false},
         ${message.answeredAlone ?? false}
         FROM writer w
       RETURNING ${COLUMNS}`,
    );
    return rows[0] ?? null;
  }

  /** One statement for a whole import: parsing thousands of single INSERTs is slow in WASM. */
  async insertMany(manager: EntityManager, messages: NewMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    const col = <K extends keyof NewMessage>(k: K) => messages.map((m) => m[k]);
    await run(
      manager,
      sql`INSERT INTO messages (conversation_id, legacy_id, user_id, turn_index, role, content,
                             token_count, metadata, client_message_id, occurred_at, placeholder)
       SELECT t.conversation_id, t.legacy_id, t.user_id, t.turn_index, t.role, t.content,
              t.token_count, t.metadata, t.client_message_id, COALESCE(t.occurred_at, now()),
              t.placeholder
         FROM unnest(${col('conversationId')}::uuid[], ${col('legacyId')}::uuid[], ${col('userId')}::uuid[], ${col('turnIndex')}::int[], ${col('role')}::text[], ${col('content')}::text[],
                     ${col('tokenCount')}::int[], ${messages.map((m) => JSON.stringify(m.metadata))}::jsonb[], ${col('clientMessageId')}::text[], ${col('occurredAt')}::timestamptz[],
                     ${messages.map((m) => m.placeholder ?? false)}::boolean[])
           AS t(conversation_id, legacy_id, user_id, turn_index, role, content, token_count,
                metadata, client_message_id, occurred_at, placeholder)`,
    );
    return messages.length;
  }

  async findByClientId(
    conversationId: string,
    clientMessageId: string,
    manager?: EntityManager,
  ): Promise<MessageEntity | null> {
    const rows: MessageEntity[] = await run(
      this.m(manager),
      sql`SELECT ${COLUMNS} FROM messages WHERE conversation_id = ${conversationId} AND client_message_id = ${clientMessageId}`,
    );
    return rows[0] ?? null;
  }

  async findById(id: string): Promise<MessageEntity | null> {
    const rows: MessageEntity[] = await run(
      this.m(),
      sql`SELECT ${COLUMNS} FROM messages WHERE id = ${id}`,
    );
    return rows[0] ?? null;
  }

  async findByIds(ids: readonly string[]): Promise<MessageEntity[]> {
    if (ids.length === 0) return [];
    return run(this.m(), sql`SELECT ${COLUMNS} FROM messages WHERE id = ANY(${ids}::uuid[])`);
  }

  /** A page by turn index: ascending after a cursor, or descending before one. */
  page(
    conversationId: string,
    limit: number,
    direction: 'forward' | 'backward',
    cursorTurn?: number,
    /** Turns from this index on are not returned (a participant who left reads up to it). */
    until: number | null = null,
  ): Promise<MessageEntity[]> {
    const forward = direction === 'forward';
    const where = [sql`conversation_id = ${conversationId}`];
    if (cursorTurn !== undefined) {
      where.push(sql`turn_index ${forward ? raw('>') : raw('<')} ${cursorTurn}`);
    }
    if (until !== null) where.push(sql`turn_index < ${until}`);
    return run(
      this.m(),
      sql`SELECT ${COLUMNS} FROM messages WHERE ${join(where, ' AND ')}
        ORDER BY turn_index ${forward ? raw('ASC') : raw('DESC')} LIMIT ${limit}`,
    );
  }

  /** The last `count` turns, oldest first. */
  async recent(
    conversationId: string,
    count: number,
    beforeTurn?: number,
  ): Promise<MessageEntity[]> {
    const rows = await this.page(conversationId, count, 'backward', beforeTurn);
    return rows.reverse();
  }

  /** The conversations and turns (notices left out) of a member in a legacy in [from, to). */
  async coverage(
    userId: string,
    legacyId: string,
    from: Date,
    to: Date,
  ): Promise<{ conversationIds: string[]; turnCount: number }> {
    const rows: { conversationIds: string[] | null; turnCount: number }[] = await run(
      this.m(),
      sql`SELECT array_agg(DISTINCT conversation_id) AS "conversationIds", count(*)::int AS "turnCount"
         FROM messages
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND occurred_at >= ${from} AND occurred_at < ${to}
          AND NOT placeholder`,
    );
    return {
      conversationIds: [...(rows[0]?.conversationIds ?? [])].sort(),
      turnCount: rows[0]?.turnCount ?? 0,
    };
  }

  async countByConversation(conversationId: string): Promise<number> {
    const rows: { n: string }[] = await run(
      this.m(),
      sql`SELECT count(*) AS n FROM messages WHERE conversation_id = ${conversationId}`,
    );
    return Number(rows[0].n);
  }
}
