import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { run, sql } from '../database/sql.js';

/**
 * The scheduled sweeps' statements: the only memory SQL that spans every user, so it is kept
 * apart from the per-user repositories, whose every query is scoped by the owner.
 */
@Injectable()
export class MemoryMaintenanceRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Hard-deletes memories forgotten before `before`, in batches; returns how many. */
  async purgeForgotten(before: Date, batch = 500): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await run(
        this.dataSource.manager,
        sql`DELETE FROM memories WHERE id IN (
           SELECT id FROM memories WHERE status = 'DELETED' AND deleted_at <= ${before}
            ORDER BY deleted_at LIMIT ${batch})
         RETURNING id`,
      );
      const n = deleted.length;
      total += n;
      if (n < batch) return total;
    }
  }

  /**
   * Archives active memories created more than `ageMonths` ago and not referenced for
   * `unreferencedMonths`, for users who did not choose long-term memory.
   */
  async archiveForRetention(
    now: Date,
    ageMonths: number,
    unreferencedMonths: number,
  ): Promise<{ id: string; userId: string }[]> {
    return run<{ id: string; userId: string }>(
      this.dataSource.manager,
      sql`UPDATE memories m SET status = 'ARCHIVED', archive_reason = 'RETENTION', archived_at = ${now},
              updated_at = ${now},
              history = m.history || jsonb_build_array(jsonb_build_object(
                'at', ${now.toISOString()}::text, 'action', 'ARCHIVED', 'fromStatus', 'ACTIVE',
                'reason', 'not referenced for a long time'))
         FROM users u
        WHERE u.id = m.user_id AND NOT u.long_term_memory AND m.status = 'ACTIVE'
          AND m.created_at < ${now}::timestamptz - make_interval(months => ${ageMonths})
          AND COALESCE(m.last_referenced_at, m.created_at) < ${now}::timestamptz - make_interval(months => ${unreferencedMonths})
       RETURNING m.id, m.user_id AS "userId"`,
    );
  }
}
