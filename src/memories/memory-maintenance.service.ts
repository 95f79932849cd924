import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryEvents } from './memory-events.js';
import { MemoryChangeAction } from './memory.enums.js';
import { MemoryMaintenanceRepository } from './memory-maintenance.repository.js';
import { undoWindowMs } from './memory-policy.js';

/** Scheduled task names (their jobs are `scheduled:<name>`). */
export const PURGE_TASK = 'memories-purge';
export const RETENTION_TASK = 'memories-retention';

/**
 * Deletion made real, and retention. The purge deletes forgotten memories (and, by trigger,
 * their vectors) once the undo window has passed; the retention task archives old memories
 * nobody referenced for months, unless their owner chose long-term memory. Both are idempotent:
 * a second run finds nothing left to do.
 */
@Injectable()
export class MemoryMaintenanceService {
  private readonly logger = new Logger('Memories');

  constructor(
    private readonly repo: MemoryMaintenanceRepository,
    private readonly events: MemoryEvents,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
  ) {}

  /** Hard-deletes memories forgotten more than MEMORY_UNDO_DAYS ago. */
  async purge(): Promise<number> {
    const now = this.clock.now();
    const before = new Date(now.getTime() - undoWindowMs(this.config.env.MEMORY_UNDO_DAYS));
    const purged = await this.repo.purgeForgotten(before);
    if (purged > 0) this.logger.log({ msg: 'forgotten memories purged', count: purged });
    return purged;
  }

  /** Archives memories past the retention rule; returns how many. */
  async retain(): Promise<number> {
    const now = this.clock.now();
    const archived = await this.repo.archiveForRetention(
      now,
      this.config.env.MEMORY_RETENTION_AGE_MONTHS,
      this.config.env.MEMORY_RETENTION_UNREFERENCED_MONTHS,
    );
    const byUser = new Map<string, string[]>();
    for (const row of archived) byUser.set(row.userId, [...(byUser.get(row.userId) ?? []), row.id]);
    for (const [userId, ids] of byUser) {
      await this.events.many(userId, MemoryChangeAction.ARCHIVED, ids, now);
    }
    if (archived.length > 0) {
      this.logger.log({ msg: 'memories archived by retention', count: archived.length });
    }
    return archived.length;
  }
}
