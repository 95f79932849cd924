import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/** quota_events: one row per counted action, kept for the length of its window. */
@Injectable()
export class QuotaRepository {
  /**
   * Serializes, until the transaction ends, every transaction that takes the same key, on every
   * instance sharing the database.
   */
  async lock(manager: EntityManager, key: string): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [key]);
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
    const rows: { retry_after: number }[] = await manager.query(
      `SELECT GREATEST(1, ceil(extract(epoch FROM
                (created_at + $3 * interval '1 millisecond') - clock_timestamp())))::int AS retry_after
         FROM quota_events
        WHERE scope = $1 AND subject_id = $2
          AND created_at > clock_timestamp() - $3 * interval '1 millisecond'
        ORDER BY created_at DESC
        OFFSET $4 LIMIT 1`,
      [scope, subjectId, windowMs, limit - 1],
    );
    return rows.length > 0 ? Number(rows[0].retry_after) : null;
  }

  async record(manager: EntityManager, scope: string, subjectId: string): Promise<void> {
    await manager.query(
      `INSERT INTO quota_events (scope, subject_id, created_at) VALUES ($1, $2, clock_timestamp())`,
      [scope, subjectId],
    );
  }

  /** Drops a bounded batch of rows that left the window; rows others hold are left for later. */
  async prune(manager: EntityManager, scope: string, windowMs: number): Promise<void> {
    await manager.query(
      `DELETE FROM quota_events WHERE id IN (
         SELECT id FROM quota_events
          WHERE scope = $1 AND created_at <= clock_timestamp() - $2 * interval '1 millisecond'
          LIMIT 200 FOR UPDATE SKIP LOCKED)`,
      [scope, windowMs],
    );
  }
}
