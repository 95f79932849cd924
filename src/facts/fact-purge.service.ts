import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { FactHistoryRepository } from './fact-history.repository.js';
import { FactRepository } from './fact.repository.js';

const BATCH = 100;

/** Deleted facts go for good once FACT_PURGE_AFTER has passed (the hourly 'facts-purge' task). */
@Injectable()
export class FactPurgeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly facts: FactRepository,
    private readonly history: FactHistoryRepository,
    private readonly config: AppConfig,
  ) {}

  /**
   * Removes deleted facts whose FACT_PURGE_AFTER has passed, for good. Idempotent: a second run
   * finds nothing. Returns how many went.
   */
  async purgeDeleted(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.config.env.FACT_PURGE_AFTER);
    let purged = 0;
    for (;;) {
      const ids = await this.facts.purgeable(before, BATCH);
      for (const id of ids) {
        if (await this.purge(id, before)) purged++;
      }
      if (ids.length < BATCH) return purged;
    }
  }

  /**
   * One deleted fact, if it is still deleted and past `before`: its row, sources, history and
   * vectors, and what other facts' history quoted of it. False when a restore got there first.
   */
  private purge(id: string, before: Date): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      if (!(await this.facts.lockPurgeable(m, id, before))) return false;
      await this.history.redactRelated(m, id);
      await this.facts.remove(m, id);
      return true;
    });
  }
}
