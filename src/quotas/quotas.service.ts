import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CommonErrorCode, CommonException } from '../common/errors/domain.exception.js';
import { QuotaRepository } from './quota.repository.js';

export interface WindowQuota {
  /** What is counted, e.g. `conversations.started`. */
  scope: string;
  /** Who is counted: a user's or a legacy's id. */
  subjectId: string;
  limit: number;
  windowMs: number;
  /** The error message when the limit is reached. */
  message: string;
}

/**
 * Limits counted in the database, so they hold across instances and survive deletions:
 * "at most `limit` actions in any `windowMs`" per subject. Callers take them inside the
 * transaction that does the counted work, so a refused or failed action counts nothing.
 */
@Injectable()
export class QuotasService {
  constructor(private readonly quotas: QuotaRepository) {}

  /** Counts one action, or throws RATE_LIMITED with the seconds until one is free. */
  async consume(manager: EntityManager, quota: WindowQuota): Promise<void> {
    await this.quotas.lock(manager, `quota:${quota.scope}:${quota.subjectId}`);
    const retryAfter = await this.quotas.secondsUntilFree(
      manager,
      quota.scope,
      quota.subjectId,
      quota.limit,
      quota.windowMs,
    );
    if (retryAfter !== null) {
      throw new CommonException(CommonErrorCode.RATE_LIMITED, quota.message, undefined, retryAfter);
    }
    await this.quotas.record(manager, quota.scope, quota.subjectId);
    await this.quotas.prune(manager, quota.scope, quota.windowMs);
  }

  /**
   * Refuses (RATE_LIMITED, with the seconds until there is room) when fewer than `count`
   * actions are left in the window, counting none: for work that will consume them one by one
   * and should not begin without room for all (an archive of several conversations).
   */
  async assertRoom(
    manager: EntityManager,
    quota: WindowQuota,
    count: number,
    message: string,
  ): Promise<void> {
    if (count <= 0) return;
    const retryAfter =
      count > quota.limit
        ? Math.ceil(quota.windowMs / 1000)
        : await this.quotas.secondsUntilFree(
            manager,
            quota.scope,
            quota.subjectId,
            quota.limit - count + 1,
            quota.windowMs,
          );
    if (retryAfter !== null) {
      throw new CommonException(CommonErrorCode.RATE_LIMITED, message, undefined, retryAfter);
    }
  }

  /**
   * Serializes transactions that count the same thing (e.g. the legacies one user owns) until
   * the calling transaction ends, so a count followed by an insert stays within its limit.
   */
  serialize(manager: EntityManager, key: string): Promise<void> {
    return this.quotas.lock(manager, key);
  }
}
