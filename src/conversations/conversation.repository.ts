import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { ConversationEntity } from './conversation.entity.js';
import { isMemberSql } from '../legacies/membership-sql.js';
import type { ParticipantRow } from './conversation-participant.repository.js';
import { Sql, empty, raw, run, sql } from '../database/sql.js';

/** A conversation with one user's part in it (ConversationRepository.findForParticipant). */
export interface ParticipationRow {
  conversation: ConversationEntity;
  participant: ParticipantRow;
  /** How many take or took part in it, that user included. */
  participants: number;
  /** Whether that user is a member of its legacy. */
  member: boolean;
}

@Injectable()
export class ConversationRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(ConversationEntity);
  }

  create(
    manager: EntityManager,
    fields: Pick<ConversationEntity, 'legacyId' | 'userId' | 'title'> & {
      lastActivityAt?: Date;
      imported?: boolean;
    },
  ): Promise<ConversationEntity> {
    const repo = this.repo(manager);
    return repo.save(
      repo.create({
        ...fields,
        imported: fields.imported ?? false,
        lastActivityAt: fields.lastActivityAt ?? new Date(),
      }),
    );
  }

  findById(id: string, manager?: EntityManager): Promise<ConversationEntity | null> {
    return this.repo(manager).findOneBy({ id });
  }

  /**
   * The conversation as one user takes or took part in it, with how many take or took part and
   * whether the user is a member of its legacy: what every read and command of a conversation
   * asks first, in one statement (it was three round trips, on every sendMessage). Null when
   * they never took part in it, or it does not exist.
   */
  async findForParticipant(id: string, userId: string): Promise<ParticipationRow | null> {
    const rows: (ConversationEntity &
      Omit<ParticipantRow, 'conversationId' | 'userId'> & {
        participants: number;
        member: boolean;
      })[] = await run(
      this.dataSource,
      sql`SELECT c.id, c.legacy_id AS "legacyId", c.user_id AS "userId", c.title, c.imported,
              c.next_turn_index AS "nextTurnIndex", c.last_activity_at AS "lastActivityAt",
              c.created_at AS "createdAt", c.updated_at AS "updatedAt",
              p.remember, p.added_by AS "addedBy", p.joined_at AS "joinedAt",
              p.left_at AS "leftAt", p.left_at_turn AS "leftAtTurn",
              (SELECT count(*)::int FROM conversation_participants o
                WHERE o.conversation_id = c.id) AS participants,
              ${isMemberSql(raw('c.legacy_id'), sql`${userId}`)} AS member
         FROM conversations c
         JOIN conversation_participants p ON p.conversation_id = c.id AND p.user_id = ${userId}
        WHERE c.id = ${id}`,
    );
    const row = rows[0];
    if (!row) return null;
    const { remember, addedBy, joinedAt, leftAt, leftAtTurn, participants, member, ...c } = row;
    return {
      conversation: reviveDates([c])[0],
      participant: {
        conversationId: c.id,
        userId,
        remember,
        addedBy,
        joinedAt: new Date(joinedAt),
        leftAt: leftAt === null ? null : new Date(leftAt),
        leftAtTurn,
      },
      participants,
      member,
    };
  }

  findByIds(ids: readonly string[]): Promise<ConversationEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.repo().findBy({ id: In([...ids]) });
  }

  /** The next turn index, with the conversation's row locked until the transaction ends. */
  async lockNextTurn(manager: EntityManager, id: string): Promise<number | null> {
    const rows: { next: number }[] = await run(
      manager,
      sql`SELECT next_turn_index AS next FROM conversations WHERE id = ${id} FOR UPDATE`,
    );
    return rows[0] ? Number(rows[0].next) : null;
  }

  /**
   * Reserves `count` consecutive turn indexes. The UPDATE takes the conversation's row lock,
   * so concurrent appends queue here and indexes never collide or leave gaps.
   */
  async reserveTurns(manager: EntityManager, id: string, count: number): Promise<number> {
    const rows: { start: number }[] = await run(
      manager,
      sql`UPDATE conversations
          SET next_turn_index = next_turn_index + ${count}, last_activity_at = now(), updated_at = now()
        WHERE id = ${id}
        RETURNING next_turn_index - ${count} AS start`,
    );
    return Number(rows[0].start);
  }

  /**
   * The conversations a user takes or took part in, in a legacy, most recently active first.
   * For one they left, its activity is counted up to when they left (order and cursor too).
   */
  pageForParticipant(
    legacyId: string,
    userId: string,
    limit: number,
    after?: { lastActivityAt: string; id: string },
  ): Promise<ConversationEntity[]> {
    return this.pageAsSeen(
      sql`JOIN conversation_participants pt ON pt.conversation_id = c.id AND pt.user_id = ${userId}`,
      sql`c.legacy_id = ${legacyId}`,
      limit,
      after,
    );
  }

  /**
   * The user's conversations in legacies they are no longer a member of, most recently active
   * first: theirs to find and delete. Counted up to when their part ended (a together
   * conversation others went on with).
   */
  pageLeftBehind(
    userId: string,
    limit: number,
    after?: { lastActivityAt: string; id: string },
  ): Promise<ConversationEntity[]> {
    return this.pageAsSeen(
      sql`LEFT JOIN conversation_participants pt
              ON pt.conversation_id = c.id AND pt.user_id = c.user_id`,
      sql`c.user_id = ${userId} AND NOT ${isMemberSql(raw('c.legacy_id'), raw('c.user_id'))}`,
      limit,
      after,
    );
  }

  /**
   * A page of conversations as the participant `pt` sees them: turns and activity counted up to
   * when their part ended, ordered and paged by that activity, most recent first.
   */
  private pageAsSeen(
    joined: Sql,
    where: Sql,
    limit: number,
    after?: { lastActivityAt: string; id: string },
  ): Promise<ConversationEntity[]> {
    const activity = raw(`LEAST(c.last_activity_at, coalesce(pt.left_at, c.last_activity_at))`);
    const cursor = after
      ? sql`AND (${activity}, c.id) < (${after.lastActivityAt}::timestamptz, ${after.id}::uuid)`
      : empty;
    return run<ConversationEntity>(
      this.dataSource,
      sql`SELECT c.id, c.legacy_id AS "legacyId", c.user_id AS "userId", c.title, c.imported,
                LEAST(c.next_turn_index, coalesce(pt.left_at_turn, c.next_turn_index))
                  AS "nextTurnIndex",
                ${activity} AS "lastActivityAt", c.created_at AS "createdAt",
                c.updated_at AS "updatedAt"
           FROM conversations c ${joined}
          WHERE ${where} ${cursor}
          ORDER BY ${activity} DESC, c.id DESC
          LIMIT ${limit}`,
    ).then(reviveDates);
  }

  /** Of these conversations, the ones that still exist, locked against deletion until commit. */
  async lockExisting(manager: EntityManager, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await run(
      manager,
      sql`SELECT id FROM conversations WHERE id = ANY(${ids}::uuid[]) FOR SHARE`,
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Cascades to messages and everything derived from the conversation. */
  async delete(id: string, manager?: EntityManager): Promise<void> {
    await this.repo(manager).delete({ id });
  }
}

/** Raw rows carry dates as the driver gives them. */
function reviveDates(rows: ConversationEntity[]): ConversationEntity[] {
  return rows.map((r) => ({
    ...r,
    lastActivityAt: new Date(r.lastActivityAt),
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
  }));
}
