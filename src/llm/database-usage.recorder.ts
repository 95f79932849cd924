import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ModelCallEntity } from './model-call.entity.js';
import { LoggingUsageRecorder, ModelCall, ModelUsageRecorder } from './model-usage.js';
import { affected, sql } from '../database/sql.js';

/**
 * Writes each call to `model_calls` (and logs it at debug). Inserts are not awaited by the
 * model call; `flush()` waits for those in flight, and runs before the database closes.
 */
export class DatabaseUsageRecorder implements ModelUsageRecorder {
  private readonly logger = new Logger('ModelUsage');
  private readonly log = new LoggingUsageRecorder();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    /** Also told of every call (the /metrics counters). */
    private readonly observe?: (call: ModelCall) => void,
  ) {}

  record(call: ModelCall): Promise<void> {
    this.log.record(call);
    this.observe?.(call);
    const insert = this.insert(call).finally(() => this.inFlight.delete(insert));
    this.inFlight.add(insert);
    return insert;
  }

  async flush(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** Retention: deletes the records of calls made before `before`; returns how many. */
  async deleteBefore(before: Date): Promise<number> {
    return affected(this.dataSource, sql`DELETE FROM model_calls WHERE created_at < ${before}`);
  }

  private async insert(call: ModelCall): Promise<void> {
    if (!this.dataSource.isInitialized) return;
    try {
      await this.dataSource.getRepository(ModelCallEntity).insert({
        task: call.task,
        model: call.model,
        promptVersion: call.promptVersion ?? null,
        promptTokens: call.promptTokens,
        completionTokens: call.completionTokens,
        usageEstimated: call.usageEstimated ?? false,
        durationMs: call.durationMs,
        attempts: call.attempts,
        ok: call.ok,
        error: call.error?.slice(0, 2000) ?? null,
      });
    } catch (err) {
      this.logger.warn(`could not record a model call: ${(err as Error).message}`);
    }
  }
}
