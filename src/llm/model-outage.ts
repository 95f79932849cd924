import { JobDeferred } from '../jobs/jobs.exception.js';
import { ModelUnavailableError } from './model.errors.js';

/**
 * A language model outage as a job deferral, so the job waits without spending an attempt: at
 * least `minMs`, or as long as the server's Retry-After asks. Null for any other error.
 */
export function deferForOutage(err: unknown, minMs: number): JobDeferred | null {
  if (!(err instanceof ModelUnavailableError) || !err.retryable) return null;
  return new JobDeferred(
    Math.max(minMs, (err.retryAfterSeconds ?? 0) * 1000),
    `language model unavailable: ${err.message}`,
  );
}
