import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { raw, run, sql } from '../database/sql.js';

/** A member taking part (or who took part) in a conversation. */
export interface ParticipantRow {
  conversationId: string;
  userId: string;
  /** Their own switch: memories about them come from their turns only while it is on. */
  remember: boolean;
  addedBy: string | null;
  joinedAt: Date;
  leftAt: Date | null;
  /** Set once they left: the turns below it stay readable to them, nothing after. */
  leftAtTurn: number | null;
}

const COLUMNS = raw(`conversation_id AS "conversationId", user_id AS "userId", remember,
  added_by AS "addedBy", joined_at AS "joinedAt", left_at AS "leftAt", left_at_turn AS "leftAtTurn"`);

/** All SQL of conversation participants. */
@Injectable()
export class ConversationParticipantRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Everyone who takes or took part in these conversations, in the order they joined. */
  forConversations(ids: readonly string[]): Promise<ParticipantRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return run(
      this.m(),
      sql`SELECT ${COLUMNS} FROM conversation_participants WHERE conversation_id = ANY(${ids}::uuid[])
        ORDER BY joined_at, user_id`,
    );
  }

  /**
   * Adds a participant, or brings one who left back in (seeing the whole conversation again);
   * false when they take part already.
   */
  async add(
    manager: EntityManager,
    row: { conversationId: string; userId: string; remember: boolean; addedBy: string | null },
  ): Promise<boolean> {
    const rows = await run<{ userId: string }>(
      manager,
      sql`INSERT INTO conversation_participants AS p (conversation_id, user_id, remember, added_by)
         VALUES (${row.conversationId}, ${row.userId}, ${row.remember}, ${row.addedBy})
         ON CONFLICT (conversation_id, user_id) DO UPDATE
           SET left_at = NULL, left_at_turn = NULL, added_by = EXCLUDED.added_by, joined_at = now(),
               remember = EXCLUDED.remember
           WHERE p.left_at IS NOT NULL
         RETURNING p.user_id AS "userId"`,
    );
    return rows.length > 0;
  }

  /** Ends a participation at `atTurn` (the next turn index, read under the conversation's lock). */
  async leave(
    manager: EntityManager,
    conversationId: string,
    userId: string,
    atTurn: number,
  ): Promise<boolean> {
    const rows = await run<{ userId: string }>(
      manager,
      sql`UPDATE conversation_participants SET left_at = now(), left_at_turn = ${atTurn}
          WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL
          RETURNING user_id AS "userId"`,
    );
    return rows.length > 0;
  }

  /** Sets a current participant's switch; null when they do not take part (any more). */
  async setRemember(
    conversationId: string,
    userId: string,
    remember: boolean,
  ): Promise<ParticipantRow | null> {
    const rows = await run<ParticipantRow>(
      this.m(),
      sql`UPDATE conversation_participants SET remember = ${remember}
          WHERE conversation_id = ${conversationId} AND user_id = ${userId} AND left_at IS NULL
          RETURNING ${COLUMNS}`,
    );
    return rows[0] ?? null;
  }
}
