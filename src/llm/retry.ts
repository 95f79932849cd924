import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  maxRetries: number;
  /** First delay; doubled on each retry. */
  baseMs: number;
  /** Ceiling of the computed backoff. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the call fails at once instead. */
  maxRetryAfterMs: number;
  /** Injectable for tests; Math.random otherwise. */
  random?: () => number;
}

/** How an attempt's failure should be handled. */
export interface FailureVerdict {
  retryable: boolean;
  /** The server's Retry-After, already in milliseconds. */
  retryAfterMs?: number;
}

export class RetriesExhausted extends Error {
  constructor(
    readonly lastError: unknown,
    readonly attempts: number,
    readonly verdict: FailureVerdict,
    /** Set when the server asked to wait longer than the policy allows. */
    readonly retryAfterMs?: number,
  ) {
    super('retries exhausted');
  }
}

/**
 * Exponential backoff with "equal jitter": half the doubled delay is fixed, half random. The
 * fixed half keeps retries spread out under load; the random half de-synchronises clients.
 */
export function backoffDelay(policy: RetryPolicy, retry: number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** (retry - 1));
  const random = policy.random ?? Math.random;
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * Retry-After as milliseconds: delta-seconds (fractions accepted, which some proxies send) or an
 * HTTP date. `retry-after-ms`, which OpenAI sends, wins when present.
 */
export function parseRetryAfter(
  retryAfter: string | null | undefined,
  retryAfterMs?: string | null,
  now: number = Date.now(),
): number | undefined {
  if (retryAfterMs) {
    const ms = Number(retryAfterMs);
    if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  }
  if (!retryAfter) return undefined;
  const value = retryAfter.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or the retries run out. The
 * attempt number (1-based) is passed in so callers can count requests.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T>,
  classify: (err: unknown) => FailureVerdict,
): Promise<{ value: T; attempts: number }> {
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (err) {
      const verdict = classify(err);
      if (!verdict.retryable || n > policy.maxRetries) {
        throw new RetriesExhausted(err, n, verdict);
      }
      let delay = backoffDelay(policy, n);
      if (verdict.retryAfterMs !== undefined) {
        if (verdict.retryAfterMs > policy.maxRetryAfterMs) {
          throw new RetriesExhausted(err, n, verdict, verdict.retryAfterMs);
        }
        delay = verdict.retryAfterMs;
      }
      await sleep(delay);
    }
  }
}
