import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { returned } from '../database/sql-params.js';

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

const COLUMNS = `conversation_id AS "conversationId", user_id AS "userId", remember,
  added_by AS "addedBy", joined_at AS "joinedAt", left_at AS "leftAt", left_at_turn AS "leftAtTurn"`;

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
    return this.m().query(
      `SELECT ${COLUMNS} FROM conversation_participants WHERE conversation_id = ANY($1::uuid[])
        ORDER BY joined_at, user_id`,
      [ids],
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
    const rows = returned<{ userId: string }>(
      await manager.query(
        `INSERT INTO conversation_participants AS p (conversation_id, user_id, remember, added_by)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (conversation_id, user_id) DO UPDATE
           SET left_at = NULL, left_at_turn = NULL, added_by = EXCLUDED.added_by, joined_at = now(),
               remember = EXCLUDED.remember
           WHERE p.left_at IS NOT NULL
         RETURNING p.user_id AS "userId"`,
        [row.conversationId, row.userId, row.remember, row.addedBy],
      ),
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
    const rows = returned<{ userId: string }>(
      await manager.query(
        `UPDATE conversation_participants SET left_at = now(), left_at_turn = $3
          WHERE conversation_id = $1 AND user_id = $2 AND left_at IS NULL
          RETURNING user_id AS "userId"`,
        [conversationId, userId, atTurn],
      ),
    );
    return rows.length > 0;
  }

  /** Sets a current participant's switch; null when they do not take part (any more). */
  async setRemember(
    conversationId: string,
    userId: string,
    remember: boolean,
  ): Promise<ParticipantRow | null> {
    const rows = returned<ParticipantRow>(
      await this.m().query(
        `UPDATE conversation_participants SET remember = $3
          WHERE conversation_id = $1 AND user_id = $2 AND left_at IS NULL
          RETURNING ${COLUMNS}`,
        [conversationId, userId, remember],
      ),
    );
    return rows[0] ?? null;
  }
}
