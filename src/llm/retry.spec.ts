import {
  RetriesExhausted,
  RetryPolicy,
  backoffDelay,
  parseRetryAfter,
  withRetries,
} from './retry.js';

const policy: RetryPolicy = { maxRetries: 3, baseMs: 100, maxDelayMs: 350, maxRetryAfterMs: 1000 };

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it('reads delta-seconds, including the fractions some proxies send', () => {
    expect(parseRetryAfter('2', null, now)).toBe(2000);
    expect(parseRetryAfter(' 0.25 ', null, now)).toBe(250);
  });

  it('reads an HTTP date', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:03 GMT', null, now)).toBe(3000);
    expect(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', null, now)).toBe(0);
  });

  it('prefers retry-after-ms and ignores garbage', () => {
    expect(parseRetryAfter('2', '150', now)).toBe(150);
    expect(parseRetryAfter('soon', null, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, undefined, now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles, keeps half fixed and half random, and stops at the ceiling', () => {
    const low = { ...policy, random: () => 0 };
    const high = { ...policy, random: () => 0.999999 };
    expect([1, 2, 3, 4].map((n) => backoffDelay(low, n))).toEqual([50, 100, 175, 175]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(high, n))).toEqual([100, 200, 350, 350]);
  });
});

describe('withRetries', () => {
  const fast: RetryPolicy = { maxRetries: 2, baseMs: 1, maxDelayMs: 2, maxRetryAfterMs: 50 };

  it('returns the value and the number of attempts', async () => {
    let n = 0;
    const result = await withRetries(
      fast,
      async () => {
        if (++n < 3) throw new Error('flaky');
        return 'ok';
      },
      () => ({ retryable: true }),
    );
    expect(result).toEqual({ value: 'ok', attempts: 3 });
  });

  it('stops at a failure that is not retryable', async () => {
    const err = await withRetries(
      fast,
      async () => {
        throw new Error('bad request');
      },
      () => ({ retryable: false }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhausted);
    expect((err as RetriesExhausted).attempts).toBe(1);
  });

  it('gives up after maxRetries', async () => {
    const err = (await withRetries(
      fast,
      async () => {
        throw new Error('down');
      },
      () => ({ retryable: true }),
    ).catch((e: unknown) => e)) as RetriesExhausted;
    expect(err.attempts).toBe(3);
    expect((err.lastError as Error).message).toBe('down');
  });

  it('waits for Retry-After, and refuses to wait longer than allowed', async () => {
    const started = Date.now();
    let n = 0;
    await withRetries(
      fast,
      async () => {
        if (++n === 1) throw new Error('429');
        return n;
      },
      () => ({ retryable: true, retryAfterMs: 40 }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(38);

    const err = (await withRetries(
      fast,
      async () => {
        throw new Error('429');
      },
      () => ({ retryable: true, retryAfterMs: 60_000 }),
    ).catch((e: unknown) => e)) as RetriesExhausted;
    expect(err.attempts).toBe(1);
    expect(err.retryAfterMs).toBe(60_000);
  });
});
