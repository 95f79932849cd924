import { Injectable } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { CommonErrorCode, CommonException } from '../common/errors/domain.exception.js';
import { AppConfig } from '../config/app-config.js';

const MINUTE_SECONDS = 60;

/**
 * Request and model-call budgets (rate-limiter-flexible, fixed one-minute windows). Counted in
 * each process's memory: with several instances behind a balancer a user's effective budget is
 * up to the number of instances times the configured one, which the operator sizes for; the
 * abuse limits that must hold across instances (legacies, invitations, conversations, imports)
 * are counted in the database instead (src/quotas).
 */
@Injectable()
export class RateLimitService {
  private readonly perUser: RateLimiterMemory;
  private readonly perAddress: RateLimiterMemory;
  private readonly modelCalls: RateLimiterMemory;

  constructor(config: AppConfig) {
    const env = config.env;
    this.perUser = new RateLimiterMemory({
      keyPrefix: 'user',
      points: env.RATE_LIMIT_PER_MINUTE,
      duration: MINUTE_SECONDS,
    });
    this.perAddress = new RateLimiterMemory({
      keyPrefix: 'ip',
      points: env.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
      duration: MINUTE_SECONDS,
    });
    this.modelCalls = new RateLimiterMemory({
      keyPrefix: 'model',
      points: env.MODEL_CALLS_PER_USER_PER_MINUTE,
      duration: MINUTE_SECONDS,
    });
  }

  /** One operation of a signed-in user; RATE_LIMITED beyond RATE_LIMIT_PER_MINUTE. */
  request(userId: string): Promise<void> {
    return this.take(this.perUser, userId, 'Too many requests');
  }

  /** One operation without a valid token, by address; RATE_LIMITED beyond the anonymous budget. */
  anonymous(address: string | undefined): Promise<void> {
    return this.take(
      this.perAddress,
      address ?? 'unknown',
      'Too many requests without a valid token',
    );
  }

  /** A model call asked for directly (a reply, a summary); RATE_LIMITED beyond the budget. */
  modelCall(userId: string): Promise<void> {
    return this.take(this.modelCalls, userId, 'Too many replies and summaries');
  }

  /** Refuses (RATE_LIMITED) when the user's model budget is spent, without counting a call. */
  async assertModelBudget(userId: string): Promise<void> {
    const res = await this.modelCalls.get(userId);
    if (res && res.remainingPoints <= 0) {
      const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new CommonException(
        CommonErrorCode.RATE_LIMITED,
        `Too many replies and summaries: try again in ${seconds} s.`,
        undefined,
        seconds,
      );
    }
  }

  /**
   * A model call in the background: 0 when it may go ahead (and is counted), otherwise how many
   * milliseconds to wait before trying again (the job is deferred, not dropped).
   */
  async backgroundModelCall(userId: string): Promise<number> {
    try {
      await this.modelCalls.consume(userId);
      return 0;
    } catch (res) {
      if (res instanceof RateLimiterRes) return Math.max(1000, res.msBeforeNext);
      throw res;
    }
  }

  private async take(limiter: RateLimiterMemory, key: string, what: string): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new CommonException(
        CommonErrorCode.RATE_LIMITED,
        `${what}: try again in ${seconds} s.`,
        undefined,
        seconds,
      );
    }
  }
}
