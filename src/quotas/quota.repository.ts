import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { run, sql } from '../database/sql.js';

/** quota_events: one row per counted action, kept for the length of its window. */
@Injectable()
export class QuotaRepository {
  /**
   * Serializes, until the transaction ends, every transaction that takes the same key, on every
   * instance sharing the database.
   */
  async lock(manager: EntityManager, key: string): Promise<void> {
    await run(manager, sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
  }

  /**
   * Seconds until the subject may act again when it already acted `limit` times in the window
   * (the limit-th most recent action then leaves the window), or null when it may act now.
   */
  async secondsUntilFree(
    manager: EntityManager,
    scope: string,
    subjectId: string,
    limit: number,
    windowMs: number,
  ): Promise<number | null> {
    const rows: { retry_after: number }[] = await run(
      manager,
      sql`SELECT GREATEST(1, ceil(extract(epoch FROM
                (created_at + ${windowMs} * interval '1 millisecond') - clock_timestamp())))::int AS retry_after
         FROM quota_events
        WHERE scope = ${scope} AND subject_id = ${subjectId}
          AND created_at > clock_timestamp() - ${windowMs} * interval '1 millisecond'
        ORDER BY created_at DESC
        OFFSET ${limit - 1} LIMIT 1`,
    );
    return rows.length > 0 ? Number(rows[0].retry_after) : null;
  }

  async record(manager: EntityManager, scope: string, subjectId: string): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO quota_events (scope, subject_id, created_at) VALUES (${scope}, ${subjectId}, clock_timestamp())`,
    );
  }

  /** Drops a bounded batch of rows that left the window; rows others hold are left for later. */
  async prune(manager: EntityManager, scope: string, windowMs: number): Promise<void> {
    await run(
      manager,
      sql`DELETE FROM quota_events WHERE id IN (
         SELECT id FROM quota_events
          WHERE scope = ${scope} AND created_at <= clock_timestamp() - ${windowMs} * interval '1 millisecond'
          LIMIT 200 FOR UPDATE SKIP LOCKED)`,
    );
  }
}
