import { DatabaseReads } from '../database/database-reads.js';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { SummaryPeriodName } from '../llm/language-model.js';
import { PeriodSummaryEntity } from './period-summary.entity.js';
import { Sql, empty, join, raw, run, sql } from '../database/sql.js';

export const PERIOD_KIND = 'period';

export type PeriodSummaryFields = Omit<
  PeriodSummaryEntity,
  'id' | 'stale' | 'deletedAt' | 'createdAt' | 'updatedAt'
>;

export interface BackfillProgressRow {
  id: string;
  legacyId: string;
  from: string;
  to: string;
  total: number;
  stored: number;
  empty: number;
  skipped: number;
  pending: number;
  createdAt: Date;
}

const COLUMNS = raw(`id, user_id AS "userId", legacy_id AS "legacyId", period,
  to_char(period_start, 'YYYY-MM-DD') AS start, to_char(period_end, 'YYYY-MM-DD') AS "end",
  time_zone AS "timeZone", starts_at AS "startsAt", ends_at AS "endsAt", summary,
  emotional_tone AS "emotionalTone", key_themes AS "keyThemes",
  recurring_patterns AS "recurringPatterns", people, places,
  conversation_count AS "conversationCount", turn_count AS "turnCount",
  source_chunk_ids AS "sourceChunkIds", source_period_ids AS "sourcePeriodIds",
  conversation_ids AS "conversationIds", source_fingerprint AS "sourceFingerprint", aggregated,
  model, prompt_version AS "promptVersion", stale, deleted_at AS "deletedAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`);

/** The content of a summary, emptied; the change is dated so a build in flight notices it. */
const EMPTIED =
  raw(`summary = '', emotional_tone = NULL, key_themes = '{}', recurring_patterns = '{}',
  people = '{}', places = '{}', updated_at = date_trunc('milliseconds', clock_timestamp())`);

function revive(row: PeriodSummaryEntity): PeriodSummaryEntity {
  return {
    ...row,
    startsAt: new Date(row.startsAt),
    endsAt: new Date(row.endsAt),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    deletedAt: row.deletedAt ? new Date(row.deletedAt) : null,
  };
}

/** All SQL of period summaries, their scheduler cursors and backfills. */
@Injectable()
export class PeriodSummaryRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reads: DatabaseReads,
  ) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  private async select(statement: Sql, manager?: EntityManager) {
    const rows = await run<PeriodSummaryEntity>(this.m(manager), statement);
    return rows.map(revive);
  }

  /** Read-only work that may go to a replica (database-reads.ts). */
  private async selectRead(statement: Sql) {
    const rows = await run<PeriodSummaryEntity>(await this.reads.source(), statement);
    return rows.map(revive);
  }

  // ---- period summaries ------------------------------------------------------------------

  /** The period's row whatever its state; locked for update when a manager is given. */
  async find(
    userId: string,
    legacyId: string,
    period: SummaryPeriodName,
    start: string,
    manager?: EntityManager,
  ): Promise<PeriodSummaryEntity | null> {
    const rows = await this.select(
      sql`SELECT ${COLUMNS} FROM period_summaries
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND period = ${period} AND period_start = ${start}
        ${manager ? sql`FOR UPDATE` : empty}`,
      manager,
    );
    return rows[0] ?? null;
  }

  /** Summaries of one kind whose starts are among `starts`, neither deleted nor stale. */
  async findStarts(
    userId: string,
    legacyId: string,
    period: SummaryPeriodName,
    starts: string[],
  ): Promise<PeriodSummaryEntity[]> {
    if (starts.length === 0) return [];
    return this.select(sql`SELECT ${COLUMNS} FROM period_summaries
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND period = ${period}
          AND period_start = ANY(${starts}::date[]) AND deleted_at IS NULL AND NOT stale
        ORDER BY period_start`);
  }

  async findById(id: string): Promise<PeriodSummaryEntity | null> {
    const rows = await this.select(
      sql`SELECT ${COLUMNS} FROM period_summaries WHERE id = ${id} AND deleted_at IS NULL`,
    );
    return rows[0] ?? null;
  }

  async findByIds(ids: readonly string[]): Promise<PeriodSummaryEntity[]> {
    if (ids.length === 0) return [];
    return this.select(
      sql`SELECT ${COLUMNS} FROM period_summaries WHERE id = ANY(${ids}::uuid[]) AND deleted_at IS NULL`,
    );
  }

  /** Serializes builds of one period (a week is built by its own job and by its month's). */
  async lockKey(manager: EntityManager, key: string): Promise<void> {
    const lockKey = `period:${key}`;
    await run(manager, sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`);
  }

  async upsert(manager: EntityManager, row: PeriodSummaryFields): Promise<PeriodSummaryEntity> {
    const rows = await this.select(
      sql`INSERT INTO period_summaries (user_id, legacy_id, period, period_start, period_end, time_zone,
         starts_at, ends_at, summary, emotional_tone, key_themes, recurring_patterns, people, places,
         conversation_count, turn_count, source_chunk_ids, source_period_ids, conversation_ids,
         source_fingerprint, aggregated, model, prompt_version)
       VALUES (${row.userId}, ${row.legacyId}, ${row.period}, ${row.start}, ${row.end},
         ${row.timeZone}, ${row.startsAt}, ${row.endsAt}, ${row.summary}, ${row.emotionalTone},
         ${row.keyThemes}, ${row.recurringPatterns}, ${row.people}, ${row.places},
         ${row.conversationCount}, ${row.turnCount}, ${row.sourceChunkIds}, ${row.sourcePeriodIds},
         ${row.conversationIds},
               ${row.sourceFingerprint}, ${row.aggregated}, ${row.model}, ${row.promptVersion})
       ON CONFLICT (user_id, legacy_id, period, period_start) DO UPDATE SET
         period_end = EXCLUDED.period_end, time_zone = EXCLUDED.time_zone,
         starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at, summary = EXCLUDED.summary,
         emotional_tone = EXCLUDED.emotional_tone, key_themes = EXCLUDED.key_themes,
         recurring_patterns = EXCLUDED.recurring_patterns, people = EXCLUDED.people,
         places = EXCLUDED.places, conversation_count = EXCLUDED.conversation_count,
         turn_count = EXCLUDED.turn_count, source_chunk_ids = EXCLUDED.source_chunk_ids,
         source_period_ids = EXCLUDED.source_period_ids,
         conversation_ids = EXCLUDED.conversation_ids,
         source_fingerprint = EXCLUDED.source_fingerprint, aggregated = EXCLUDED.aggregated,
         model = EXCLUDED.model, prompt_version = EXCLUDED.prompt_version, stale = false,
         deleted_at = NULL, updated_at = date_trunc('milliseconds', clock_timestamp())
       RETURNING ${COLUMNS}`,
      manager,
    );
    return rows[0];
  }

  /** A period left with no conversation stores nothing: a stored summary of it goes. */
  async deleteEmpty(manager: EntityManager, id: string): Promise<void> {
    await run(manager, sql`DELETE FROM period_summaries WHERE id = ${id} AND deleted_at IS NULL`);
  }

  /**
   * The member deleted it: its content and vector go now; the row stays, empty, so that no
   * scheduled or cascading rebuild brings it back (summarizePeriod still can).
   */
  async tombstone(manager: EntityManager, id: string): Promise<void> {
    await run(
      manager,
      sql`UPDATE period_summaries SET ${EMPTIED}, stale = false, source_chunk_ids = '{}',
              source_period_ids = '{}', conversation_ids = '{}', source_fingerprint = '',
              conversation_count = 0, turn_count = 0,
              deleted_at = date_trunc('milliseconds', clock_timestamp())
        WHERE id = ${id}`,
    );
    await this.forgetVectors(manager, [id]);
  }

  private async forgetVectors(manager: EntityManager, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await run(
      manager,
      sql`DELETE FROM embeddings WHERE kind = ${PERIOD_KIND} AND item_id = ANY(${ids}::uuid[])`,
    );
  }

  /**
   * Marks stale the summaries built from a conversation (a deleted one): what they said of it
   * goes at once (content and vector); they are returned to be rebuilt.
   */
  async markStaleFor(manager: EntityManager, conversationId: string) {
    return this.markStale(manager, sql`conversation_ids @> ARRAY[${conversationId}::uuid]`);
  }

  /** Marks stale a member's summaries that overlap [from, to) (turns imported into the past). */
  async markStaleBetween(
    manager: EntityManager,
    userId: string,
    legacyId: string,
    from: Date,
    to: Date,
  ) {
    return this.markStale(
      manager,
      sql`user_id = ${userId} AND legacy_id = ${legacyId} AND starts_at < ${to} AND ends_at > ${from}`,
    );
  }

  private async markStale(
    manager: EntityManager,
    where: Sql,
  ): Promise<
    { id: string; userId: string; legacyId: string; period: SummaryPeriodName; start: string }[]
  > {
    const rows = await run<{
      id: string;
      userId: string;
      legacyId: string;
      period: SummaryPeriodName;
      start: string;
    }>(
      manager,
      sql`UPDATE period_summaries SET ${EMPTIED}, stale = true
          WHERE ${where} AND deleted_at IS NULL
          RETURNING id, user_id AS "userId", legacy_id AS "legacyId", period,
                    to_char(period_start, 'YYYY-MM-DD') AS start`,
    );
    await this.forgetVectors(
      manager,
      rows.map((r) => r.id),
    );
    return rows;
  }

  /** A page of the member's summaries, newest period first. */
  page(
    userId: string,
    legacyId: string,
    period: SummaryPeriodName | null,
    limit: number,
    after: { start: string; id: string } | null,
  ): Promise<PeriodSummaryEntity[]> {
    const filters = [
      sql`user_id = ${userId}`,
      sql`legacy_id = ${legacyId}`,
      sql`deleted_at IS NULL`,
    ];
    if (period) filters.push(sql`period = ${period}`);
    if (after) {
      filters.push(sql`(period_start, id) < (${after.start}::date, ${after.id}::uuid)`);
    }
    return this.selectRead(
      sql`SELECT ${COLUMNS} FROM period_summaries WHERE ${join(filters, ' AND ')}
        ORDER BY period_start DESC, id DESC LIMIT ${limit}`,
    );
  }

  /** The member's summaries that overlap [from, to), for a question about that time. */
  overlapping(userId: string, legacyId: string, from: Date, to: Date, limit: number) {
    return this.selectRead(sql`SELECT ${COLUMNS} FROM period_summaries
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND deleted_at IS NULL AND NOT stale
          AND starts_at < ${to} AND ends_at > ${from}
        ORDER BY starts_at LIMIT ${limit}`);
  }

  /** The periods the member deleted (keys PERIOD:start): backfills leave them alone. */
  async deletedKeys(userId: string, legacyId: string): Promise<Set<string>> {
    const rows: { key: string }[] = await run(
      this.m(),
      sql`SELECT period || ':' || to_char(period_start, 'YYYY-MM-DD') AS key
         FROM period_summaries WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND deleted_at IS NOT NULL`,
    );
    return new Set(rows.map((r) => r.key));
  }

  // ---- the scheduler's cursors -----------------------------------------------------------

  async cursors(
    manager: EntityManager,
    userId: string,
    legacyId: string,
  ): Promise<Map<SummaryPeriodName, string>> {
    const rows: { period: SummaryPeriodName; next: string }[] = await run(
      manager,
      sql`SELECT period, to_char(next_start, 'YYYY-MM-DD') AS next FROM period_summary_cursors
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} FOR UPDATE`,
    );
    return new Map(rows.map((r) => [r.period, r.next]));
  }

  async setCursor(
    manager: EntityManager,
    userId: string,
    legacyId: string,
    period: SummaryPeriodName,
    next: string,
  ): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO period_summary_cursors (user_id, legacy_id, period, next_start)
       VALUES (${userId}, ${legacyId}, ${period}, ${next})
       ON CONFLICT (user_id, legacy_id, period) DO UPDATE SET next_start = EXCLUDED.next_start`,
    );
  }

  /** The cursors of many members at once, keyed `${userId}:${legacyId}:${period}`. */
  async cursorsOf(members: { userId: string; legacyId: string }[]): Promise<Map<string, string>> {
    if (members.length === 0) return new Map();
    const rows: { key: string; next: string }[] = await run(
      this.m(),
      sql`SELECT c.user_id || ':' || c.legacy_id || ':' || c.period AS key,
              to_char(c.next_start, 'YYYY-MM-DD') AS next
         FROM period_summary_cursors c
         JOIN unnest(${members.map((m) => m.userId)}::uuid[], ${members.map((m) => m.legacyId)}::uuid[]) AS m(u, l) ON c.user_id = m.u AND c.legacy_id = m.l`,
    );
    return new Map(rows.map((r) => [r.key, r.next]));
  }

  // ---- backfills -------------------------------------------------------------------------

  async createBackfill(
    manager: EntityManager,
    userId: string,
    legacyId: string,
    from: string,
    to: string,
    items: { period: SummaryPeriodName; start: string }[],
  ): Promise<string> {
    const [{ id }]: { id: string }[] = await run(
      manager,
      sql`INSERT INTO period_summary_backfills (user_id, legacy_id, from_day, to_day)
       VALUES (${userId}, ${legacyId}, ${from}, ${to}) RETURNING id`,
    );
    if (items.length > 0) {
      await run(
        manager,
        sql`INSERT INTO period_summary_backfill_items (backfill_id, user_id, legacy_id, period, period_start)
         SELECT ${id}, ${userId},
           ${legacyId}, p, s FROM unnest(${items.map((i) => i.period)}::text[], ${items.map((i) => i.start)}::date[]) AS t(p, s)`,
      );
    }
    return id;
  }

  /** Whatever backfills wait for this period, it is done. */
  async completeBackfillItems(
    userId: string,
    legacyId: string,
    period: SummaryPeriodName,
    start: string,
    state: 'STORED' | 'EMPTY' | 'SKIPPED',
    manager?: EntityManager,
  ): Promise<void> {
    await run(
      this.m(manager),
      sql`UPDATE period_summary_backfill_items SET state = ${state}
        WHERE user_id = ${userId} AND legacy_id = ${legacyId} AND period = ${period} AND period_start = ${start}
          AND state = 'PENDING'`,
    );
  }

  async backfillProgress(id: string, userId: string): Promise<BackfillProgressRow | null> {
    const rows: BackfillProgressRow[] = await run(
      this.m(),
      sql`SELECT b.id, b.legacy_id AS "legacyId", to_char(b.from_day, 'YYYY-MM-DD') AS "from",
              to_char(b.to_day, 'YYYY-MM-DD') AS "to", b.created_at AS "createdAt",
              count(i.*)::int AS total,
              count(i.*) FILTER (WHERE i.state = 'STORED')::int AS stored,
              count(i.*) FILTER (WHERE i.state = 'EMPTY')::int AS empty,
              count(i.*) FILTER (WHERE i.state = 'SKIPPED')::int AS skipped,
              count(i.*) FILTER (WHERE i.state = 'PENDING')::int AS pending
         FROM period_summary_backfills b
         LEFT JOIN period_summary_backfill_items i ON i.backfill_id = b.id
        WHERE b.id = ${id} AND b.user_id = ${userId}
        GROUP BY b.id`,
    );
    return rows[0] ? { ...rows[0], createdAt: new Date(rows[0].createdAt) } : null;
  }
}
