import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { run, sql } from '../database/sql.js';

/** One A/B arm's raw counts over a period. */
export interface ArmCounts {
  replies: number;
  referenced: number;
  complaints: number;
  conversations: number;
  /** Mean and sample variance of the turns of the arm's conversations. */
  meanTurns: number;
  varianceTurns: number;
}

/**
 * The agent's replies of a period, by A/B arm. Only model-written replies count: an error turn
 * or a notice (no model configured) says nothing about what memory does. Aggregates only.
 */
@Injectable()
export class MemoryUpliftRepository {
  constructor(private readonly dataSource: DataSource) {}

  async arms(from: Date, to: Date): Promise<{ memory: ArmCounts; holdout: ArmCounts }> {
    const rows: Record<string, string | number | boolean | null>[] = await run(
      this.dataSource,
      sql`WITH r AS (
         SELECT ar.conversation_id, ar.memory_holdout, ar.memory_referenced, ar.forgot_complaint
           FROM assistant_replies ar
           JOIN messages m ON m.id = ar.message_id
          WHERE ar.created_at >= ${from} AND ar.created_at < ${to}
            AND NOT ar.is_error AND NOT m.placeholder
       ), c AS (
         SELECT r.memory_holdout, c.next_turn_index AS turns
           FROM (SELECT DISTINCT conversation_id, memory_holdout FROM r) r
           JOIN conversations c ON c.id = r.conversation_id
       )
       SELECT h.holdout,
              (SELECT count(*) FROM r WHERE r.memory_holdout = h.holdout) AS replies,
              (SELECT count(*) FROM r WHERE r.memory_holdout = h.holdout AND r.memory_referenced)
                AS referenced,
              (SELECT count(*) FROM r WHERE r.memory_holdout = h.holdout AND r.forgot_complaint)
                AS complaints,
              (SELECT count(*) FROM c WHERE c.memory_holdout = h.holdout) AS conversations,
              (SELECT coalesce(avg(turns), 0) FROM c WHERE c.memory_holdout = h.holdout)
                AS "meanTurns",
              (SELECT coalesce(var_samp(turns), 0) FROM c WHERE c.memory_holdout = h.holdout)
                AS "varianceTurns"
         FROM (VALUES (false), (true)) AS h(holdout)`,
    );
    const arm = (holdout: boolean): ArmCounts => {
      const row = rows.find((r) => r.holdout === holdout)!;
      const n = (k: string) => Number(row[k] ?? 0);
      return {
        replies: n('replies'),
        referenced: n('referenced'),
        complaints: n('complaints'),
        conversations: n('conversations'),
        meanTurns: n('meanTurns'),
        varianceTurns: n('varianceTurns'),
      };
    };
    return { memory: arm(false), holdout: arm(true) };
  }
}
