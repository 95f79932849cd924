import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { run, sql } from '../database/sql.js';

/** The queue's figures for the /metrics gauges: counts only, one statement. */
@Injectable()
export class GaugesRepository {
  constructor(private readonly dataSource: DataSource) {}

  async jobQueue(): Promise<{
    jobs: { type: string; status: string; count: number }[];
    oldestDueJobSeconds: number;
  }> {
    const rows: { type: string | null; status: string | null; count: string; oldest: string }[] =
      await run(
        this.dataSource,
        sql`SELECT type, status, count(*) AS count, NULL AS oldest
           FROM jobs WHERE status IN ('PENDING', 'RUNNING', 'FAILED')
          GROUP BY type, status
         UNION ALL
         SELECT NULL, NULL, 0,
                coalesce(extract(epoch FROM now() - min(run_at)), 0)::text
           FROM jobs WHERE status = 'PENDING' AND run_at <= now()`,
      );
    const oldest = rows.find((r) => r.type === null);
    return {
      jobs: rows
        .filter((r) => r.type !== null)
        .map((r) => ({ type: r.type!, status: r.status!, count: Number(r.count) })),
      oldestDueJobSeconds: Math.max(0, Number(oldest?.oldest ?? 0)),
    };
  }
}
