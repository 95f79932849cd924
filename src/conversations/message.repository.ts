import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MessageRole } from './message-role.enum.js';
import { MessageEntity } from './message.entity.js';
import { SqlParams } from '../database/sql-params.js';

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

const COLUMNS = `id, conversation_id AS "conversationId", legacy_id AS "legacyId", user_id AS "userId",
  turn_index AS "turnIndex", role, content, token_count AS "tokenCount", metadata,
  client_message_id AS "clientMessageId", created_at AS "createdAt", occurred_at AS "occurredAt",
  placeholder, answered_alone AS "answeredAlone"`;

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
    const rows: MessageEntity[] = await manager.query(
      `WITH counter AS (
         UPDATE conversations
            SET next_turn_index = next_turn_index + 1, last_activity_at = now(), updated_at = now()
          WHERE id = $1
          RETURNING id, next_turn_index - 1 AS turn
       ),
       writer AS (
         SELECT c.turn FROM counter c WHERE NOT $12::boolean
         UNION ALL
         SELECT c.turn FROM counter c
          CROSS JOIN LATERAL (
            SELECT 1 FROM conversation_participants p
             WHERE p.conversation_id = c.id AND p.user_id = $3 AND p.left_at IS NULL
               FOR SHARE) taking_part
          WHERE $12::boolean
       )
       INSERT INTO messages (conversation_id, legacy_id, user_id, turn_index, role, content,
                             token_count, metadata, client_message_id, occurred_at, placeholder,
                             answered_alone)
       SELECT $1, $2, $3, w.turn, $4, $5, $6, $7, $8, COALESCE($9, now()), $10, $11
         FROM writer w
       RETURNING ${COLUMNS}`,
      [
        message.conversationId,
        message.legacyId,
        message.userId,
        message.role,
        message.content,
        message.tokenCount,
        JSON.stringify(message.metadata),
        message.clientMessageId,
        message.occurredAt,
        message.placeholder ?? false,
        message.answeredAlone ?? false,
        writerTakesPart,
      ],
    );
    return rows[0] ?? null;
  }

  /** One statement for a whole import: parsing thousands of single INSERTs is slow in WASM. */
  async insertMany(manager: EntityManager, messages: NewMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    const col = <K extends keyof NewMessage>(k: K) => messages.map((m) => m[k]);
    await manager.query(
      `INSERT INTO messages (conversation_id, legacy_id, user_id, turn_index, role, content,
                             token_count, metadata, client_message_id, occurred_at)
       SELECT t.conversation_id, t.legacy_id, t.user_id, t.turn_index, t.role, t.content,
              t.token_count, t.metadata, t.client_message_id, COALESCE(t.occurred_at, now())
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::text[], $6::text[],
                     $7::int[], $8::jsonb[], $9::text[], $10::timestamptz[])
           AS t(conversation_id, legacy_id, user_id, turn_index, role, content, token_count,
                metadata, client_message_id, occurred_at)`,
      [
        col('conversationId'),
        col('legacyId'),
        col('userId'),
        col('turnIndex'),
        col('role'),
        col('content'),
        col('tokenCount'),
        messages.map((m) => JSON.stringify(m.metadata)),
        col('clientMessageId'),
        col('occurredAt'),
      ],
    );
    return messages.length;
  }

  async findByClientId(
    conversationId: string,
    clientMessageId: string,
    manager?: EntityManager,
  ): Promise<MessageEntity | null> {
    const rows: MessageEntity[] = await this.m(manager).query(
      `SELECT ${COLUMNS} FROM messages WHERE conversation_id = $1 AND client_message_id = $2`,
      [conversationId, clientMessageId],
    );
    return rows[0] ?? null;
  }

  async findById(id: string): Promise<MessageEntity | null> {
    const rows: MessageEntity[] = await this.m().query(
      `SELECT ${COLUMNS} FROM messages WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async findByIds(ids: readonly string[]): Promise<MessageEntity[]> {
    if (ids.length === 0) return [];
    return this.m().query(`SELECT ${COLUMNS} FROM messages WHERE id = ANY($1::uuid[])`, [ids]);
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
    const p = new SqlParams();
    let where = `conversation_id = ${p.add(conversationId)}`;
    if (cursorTurn !== undefined) {
      where += ` AND turn_index ${forward ? '>' : '<'} ${p.add(cursorTurn)}`;
    }
    if (until !== null) where += ` AND turn_index < ${p.add(until)}`;
    return this.m().query(
      `SELECT ${COLUMNS} FROM messages WHERE ${where}
        ORDER BY turn_index ${forward ? 'ASC' : 'DESC'} LIMIT ${p.add(limit)}`,
      p.values,
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
    const rows: { conversationIds: string[] | null; turnCount: number }[] = await this.m().query(
      `SELECT array_agg(DISTINCT conversation_id) AS "conversationIds", count(*)::int AS "turnCount"
         FROM messages
        WHERE user_id = $1 AND legacy_id = $2 AND occurred_at >= $3 AND occurred_at < $4
          AND NOT placeholder`,
      [userId, legacyId, from, to],
    );
    return {
      conversationIds: [...(rows[0]?.conversationIds ?? [])].sort(),
      turnCount: rows[0]?.turnCount ?? 0,
    };
  }

  async countByConversation(conversationId: string): Promise<number> {
    const rows: { n: string }[] = await this.m().query(
      `SELECT count(*) AS n FROM messages WHERE conversation_id = $1`,
      [conversationId],
    );
    return Number(rows[0].n);
  }
}
