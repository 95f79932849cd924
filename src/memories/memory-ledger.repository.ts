import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { isMemberSql } from '../legacies/membership-sql.js';
import type { MemoryConsent } from './memory-policy.js';
import { empty, join, raw, run, sql } from '../database/sql.js';

export interface LedgerRow {
  sourceMessageId: string;
  attempts: number;
  startedAt: Date;
  completedAt: Date | null;
}

export interface ExchangeRow {
  conversationId: string;
  legacyId: string;
  /** The participant the assistant turn answered: memories are theirs, from their turn only. */
  answeredUserId: string;
  remember: boolean;
  memoryPaused: boolean;
  assistantMessageId: string;
  assistantContent: string;
  /** The assistant turn is a notice, not a reply (MessageEntity.placeholder). */
  assistantPlaceholder: boolean;
  assistantTurnIndex: number;
  userMessageId: string | null;
  userContent: string | null;
  userTurnIndex: number | null;
  userMessageUserId: string | null;
  userOccurredAt: Date | null;
  /** When the user turn was stored (the database's clock, as memory fences are). */
  userCreatedAt: Date | null;
  agentWrote: boolean;
}

/** A turn whose extraction is settled without running (no consent, cleared). */
interface FinalRow {
  sourceMessageId: string;
  userId: string;
  conversationId: string;
  assistantMessageId: string;
  now: Date;
}

/**
 * The extraction ledger (one row per user turn: attempts, outcome, counts) and the reads that
 * extraction needs about a turn and its consent.
 */
@Injectable()
export class MemoryLedgerRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /**
   * A participant's consent as it stands now, read inside the turn's transaction: their own
   * switch in the conversation (while they take part) and their pause.
   */
  async consent(
    manager: EntityManager,
    conversationId: string,
    userId: string,
    options: { lock?: boolean } = {},
  ): Promise<MemoryConsent | null> {
    const rows: MemoryConsent[] = await run(
      manager,
      sql`SELECT p.remember AND p.left_at IS NULL AS remember, u.memory_paused AS "memoryPaused"
         FROM conversation_participants p JOIN users u ON u.id = p.user_id
        WHERE p.conversation_id = ${conversationId} AND p.user_id = ${userId}
         ${options.lock ? sql`FOR SHARE OF p, u` : empty}`,
    );
    return rows[0] ?? null;
  }

  /** The user turn an assistant turn answers: that participant's latest USER turn before it. */
  async answeredUserTurn(
    manager: EntityManager,
    conversationId: string,
    beforeTurn: number,
    userId: string,
  ): Promise<string | null> {
    const rows: { id: string }[] = await run(
      manager,
      sql`SELECT id FROM messages
        WHERE conversation_id = ${conversationId} AND turn_index < ${beforeTurn} AND role = 'USER' AND user_id = ${userId}
        ORDER BY turn_index DESC LIMIT 1`,
    );
    return rows[0]?.id ?? null;
  }

  /**
   * Exchanges (a user turn and the assistant turn that answered it) in conversations with
   * remember on, of users whose memory is not paused, that extraction never completed: what a
   * memory backfill runs. Imported conversations only when asked for.
   */
  async unextractedExchanges(
    scope: { legacyId?: string | null; userId?: string | null; includeImports: boolean },
    limit: number,
    after: { conversationId: string; turnIndex: number } | null,
  ): Promise<
    {
      userMessageId: string;
      assistantMessageId: string;
      conversationId: string;
      turnIndex: number;
    }[]
  > {
    // Each participant's own turns, under their own switch; a member who left the legacy (or
    // the conversation) keeps their conversations but gets no new memories from them.
    const where = [
      sql`cp.remember`,
      sql`cp.left_at IS NULL`,
      sql`NOT u.memory_paused`,
      isMemberSql(raw('c.legacy_id'), raw('q.user_id')),
    ];
    if (!scope.includeImports) where.push(sql`NOT c.imported`);
    if (scope.legacyId) where.push(sql`c.legacy_id = ${scope.legacyId}`);
    if (scope.userId) where.push(sql`q.user_id = ${scope.userId}`);
    if (after) {
      where.push(
        sql`(c.id, q.turn_index) > (${after.conversationId}::uuid, ${after.turnIndex}::int)`,
      );
    }
    return run(
      this.m(),
      sql`SELECT q.id AS "userMessageId", a.id AS "assistantMessageId", c.id AS "conversationId",
              q.turn_index AS "turnIndex"
         FROM conversations c
         JOIN messages q ON q.conversation_id = c.id AND q.role = 'USER'
         JOIN conversation_participants cp ON cp.conversation_id = c.id AND cp.user_id = q.user_id
         JOIN users u ON u.id = q.user_id
         JOIN messages a ON a.conversation_id = c.id AND a.turn_index = q.turn_index + 1
                        AND a.role = 'ASSISTANT' AND a.user_id = q.user_id
        WHERE ${join(where, ' AND ')}
          AND NOT EXISTS (SELECT 1 FROM memory_extractions e
                           WHERE e.source_message_id = q.id AND e.completed_at IS NOT NULL)
        ORDER BY c.id, q.turn_index
        LIMIT ${limit}`,
    );
  }

  /** An exchange with the consent that applies to it now. */
  async exchange(assistantMessageId: string, userMessageId: string): Promise<ExchangeRow | null> {
    const rows: ExchangeRow[] = await run(
      this.m(),
      sql`SELECT c.id AS "conversationId", c.legacy_id AS "legacyId", a.user_id AS "answeredUserId",
              coalesce(cp.remember AND cp.left_at IS NULL, false) AS remember,
              u.memory_paused AS "memoryPaused",
              a.id AS "assistantMessageId", a.content AS "assistantContent",
              a.placeholder AS "assistantPlaceholder", a.turn_index AS "assistantTurnIndex",
              q.id AS "userMessageId", q.content AS "userContent", q.turn_index AS "userTurnIndex",
              q.user_id AS "userMessageUserId", q.occurred_at AS "userOccurredAt",
              q.created_at AS "userCreatedAt",
              EXISTS (SELECT 1 FROM assistant_replies r WHERE r.message_id = a.id) AS "agentWrote"
         FROM messages a
         JOIN conversations c ON c.id = a.conversation_id
         JOIN users u ON u.id = a.user_id
         LEFT JOIN conversation_participants cp ON cp.conversation_id = c.id
                                               AND cp.user_id = a.user_id
         LEFT JOIN messages q ON q.id = ${userMessageId} AND q.conversation_id = a.conversation_id
                              AND q.role = 'USER'
        WHERE a.id = ${assistantMessageId} AND a.role = 'ASSISTANT'`,
    );
    return rows[0] ?? null;
  }

  async ledgerForUpdate(manager: EntityManager, sourceMessageId: string) {
    const rows: LedgerRow[] = await run(
      manager,
      sql`SELECT source_message_id AS "sourceMessageId", attempts, started_at AS "startedAt",
              completed_at AS "completedAt"
         FROM memory_extractions WHERE source_message_id = ${sourceMessageId} FOR UPDATE`,
    );
    return rows[0] ?? null;
  }

  /** Extractions this user started since `since` (other than this one), and the oldest. */
  async recentExtractions(
    manager: EntityManager,
    userId: string,
    since: Date,
    exclude: string,
  ): Promise<{ count: number; oldest: Date | null }> {
    const rows: { n: string; oldest: Date | null }[] = await run(
      manager,
      sql`SELECT count(*) AS n, min(started_at) AS oldest FROM memory_extractions
        WHERE user_id = ${userId} AND started_at > ${since} AND source_message_id <> ${exclude}`,
    );
    return { count: Number(rows[0].n), oldest: rows[0].oldest };
  }

  async startExtraction(
    manager: EntityManager,
    row: {
      sourceMessageId: string;
      userId: string;
      conversationId: string;
      assistantMessageId: string;
      now: Date;
    },
  ): Promise<number> {
    const rows: { attempts: number }[] = await run(
      manager,
      sql`INSERT INTO memory_extractions
         (source_message_id, user_id, conversation_id, assistant_message_id, attempts, started_at)
       VALUES (${row.sourceMessageId}, ${row.userId}, ${row.conversationId},
         ${row.assistantMessageId}, 1, ${row.now})
       ON CONFLICT (source_message_id) DO UPDATE
         SET attempts = memory_extractions.attempts + 1, started_at = EXCLUDED.started_at
       RETURNING attempts`,
    );
    return rows[0].attempts;
  }

  async completeExtraction(
    manager: EntityManager,
    sourceMessageId: string,
    result: {
      outcome: 'EXTRACTED' | 'NO_CONSENT' | 'CLEARED';
      model: string | null;
      proposed: number;
      belowThreshold: number;
      created: number;
      merged: number;
      superseded: number;
      now: Date;
    },
  ): Promise<void> {
    await run(
      manager,
      sql`UPDATE memory_extractions SET outcome = ${result.outcome}, model = ${result.model}, proposed_count = ${result.proposed},
              below_threshold_count = ${result.belowThreshold}, created_count = ${result.created}, merged_count = ${result.merged},
              superseded_count = ${result.superseded}, completed_at = ${result.now}
        WHERE source_message_id = ${sourceMessageId}`,
    );
  }

  /** Records that a turn was examined without consent, so it is never extracted later. */
  recordNoConsent(manager: EntityManager, row: FinalRow): Promise<void> {
    return this.recordFinal(manager, row, 'NO_CONSENT');
  }

  /**
   * Records that the member cleared their memories after this turn was stored: final, so its
   * extraction never runs, now or in a backfill.
   */
  recordCleared(manager: EntityManager, row: FinalRow): Promise<void> {
    return this.recordFinal(manager, row, 'CLEARED');
  }

  /** A turn's extraction settled without running: its row, or an unfinished one, completed. */
  private async recordFinal(
    manager: EntityManager,
    row: FinalRow,
    outcome: 'NO_CONSENT' | 'CLEARED',
  ): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO memory_extractions (source_message_id, user_id, conversation_id,
              assistant_message_id, outcome, started_at, completed_at)
       VALUES (${row.sourceMessageId}, ${row.userId}, ${row.conversationId},
         ${row.assistantMessageId}, ${outcome}, ${row.now}, ${row.now})
       ON CONFLICT (source_message_id) DO UPDATE SET outcome = ${outcome}, completed_at = ${row.now}
        WHERE memory_extractions.completed_at IS NULL`,
    );
  }

  /**
   * Marks a user turn as a memory command: extraction leaves it alone, also when its job is
   * already running (the job's save guard sees the ledger completed and writes nothing).
   */
  async recordCommand(
    manager: EntityManager,
    row: { sourceMessageId: string; userId: string; conversationId: string; now: Date },
  ): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO memory_extractions (source_message_id, user_id, conversation_id,
              outcome, started_at, completed_at)
       VALUES (${row.sourceMessageId}, ${row.userId}, ${row.conversationId}, 'COMMAND', ${row.now},
         ${row.now})
       ON CONFLICT (source_message_id) DO UPDATE SET outcome = 'COMMAND', completed_at = ${row.now}
        WHERE memory_extractions.completed_at IS NULL`,
    );
  }

  async extractionTotals(userId: string) {
    const rows: Record<string, string>[] = await run(
      this.m(),
      sql`SELECT count(*) AS turns, COALESCE(sum(proposed_count), 0) AS proposed,
              COALESCE(sum(created_count), 0) AS created, COALESCE(sum(merged_count), 0) AS merged,
              COALESCE(sum(superseded_count), 0) AS superseded,
              COALESCE(sum(below_threshold_count), 0) AS "belowThreshold"
         FROM memory_extractions WHERE user_id = ${userId} AND outcome = 'EXTRACTED'`,
    );
    const r = rows[0];
    return {
      turns: Number(r.turns),
      proposed: Number(r.proposed),
      created: Number(r.created),
      merged: Number(r.merged),
      superseded: Number(r.superseded),
      belowThreshold: Number(r.belowThreshold),
    };
  }
}
