import { jest } from '@jest/globals';
import { PublicErrorCode } from '../common/errors/domain.exception.js';
import { asBackground, asRequest, DatabaseQueue, markQuery } from './database-queue.js';
import { DatabaseException } from './database.exception.js';

describe('DatabaseQueue', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const queue = (requestTimeoutMs = 1_000, connectTimeoutMs = 10_000, slots = 1) =>
    new DatabaseQueue({ requestTimeoutMs, connectTimeoutMs, slots }, () => Date.now());

  /** Runs `fn` as a GraphQL query that came in at `since`. */
  const asQuery = <T>(fn: () => T, since?: number) =>
    asRequest(() => {
      markQuery();
      return fn();
    }, since);

  /** Holds the connection; the order in which the queued callers get it, one after another. */
  async function served(q: DatabaseQueue, queueUp: (log: string[]) => void): Promise<string[]> {
    const hold = await q.acquire();
    const log: string[] = [];
    queueUp(log);
    hold();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    return log;
  }

  /** Takes a turn as `name` and gives it back at once. */
  const turn = (q: DatabaseQueue, log: string[], name: string) =>
    void q.acquire().then((release) => {
      log.push(name);
      release();
    });

  it('gives the connection at once when nobody holds it', async () => {
    const q = queue();
    const release = await asRequest(() => q.acquire());
    expect(q.waiting()).toEqual({ requests: 0, queries: 0, background: 0, refused: 0 });
    release();
    release(); // twice is once
    await expect(q.acquire()).resolves.toBeInstanceOf(Function);
  });

  it('serves requests in the order they came in, not the order their statements asked', async () => {
    const q = queue();
    const log = await served(q, (log) => {
      asRequest(() => turn(q, log, 'third'), 300);
      asRequest(() => turn(q, log, 'first'), 100);
      asRequest(() => turn(q, log, 'second'), 200);
      asRequest(() => turn(q, log, 'first again'), 100);
    });
    expect(log).toEqual(['first', 'first again', 'second', 'third']);
  });

  it('serves requests before background work that asked earlier', async () => {
    const q = queue();
    const log = await served(q, (log) => {
      asBackground(() => turn(q, log, 'job'));
      asRequest(() => turn(q, log, 'request'));
      turn(q, log, 'unmarked');
    });
    expect(log).toEqual(['request', 'unmarked', 'job']);
  });

  it('lets background work go first once it has waited half of the connect timeout', async () => {
    const q = queue(5_000, 1_000);
    const hold = await q.acquire();
    const log: string[] = [];
    asBackground(() => turn(q, log, 'job'));
    jest.advanceTimersByTime(500);
    asRequest(() => turn(q, log, 'request'));
    hold();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(log).toEqual(['job', 'request']);
  });

  it('refuses a request that could not begin within the bound, with a retry hint', async () => {
    const q = queue(2_500);
    const hold = await q.acquire();
    const request = asRequest(async () => {
      const first = await q.acquire().catch((e: unknown) => e);
      // Every later statement of that request is refused too: nothing of it runs half-way.
      const later = await q.acquire().catch((e: unknown) => e);
      return { first, later };
    });
    jest.advanceTimersByTime(2_499);
    expect(q.waiting().requests).toBe(1);
    jest.advanceTimersByTime(1);
    const { first, later } = await request;
    expect(first).toBeInstanceOf(DatabaseException);
    expect(first).toMatchObject({
      publicCode: PublicErrorCode.UNAVAILABLE,
      reason: 'DATABASE_BUSY',
      retryAfterSeconds: 3,
    });
    expect(later).toMatchObject({ reason: 'DATABASE_BUSY' });
    expect(q.waiting()).toEqual({ requests: 0, queries: 0, background: 0, refused: 1 });
    hold();
  });

  it('never refuses a request once one of its statements ran', async () => {
    const q = queue(100, 10_000);
    const log: string[] = [];
    let second!: Promise<void>;
    await asRequest(async () => {
      (await q.acquire())();
      const other = await asRequest(() => q.acquire()); // another request holds it now
      second = q.acquire().then((release) => {
        log.push('second statement');
        release();
      });
      jest.advanceTimersByTime(5_000);
      other();
    });
    await second;
    expect(log).toEqual(['second statement']);
    expect(q.waiting().refused).toBe(0);
  });

  it('does not refuse statements of a request one of whose statements was served meanwhile', async () => {
    const q = queue(1_000);
    const hold = await q.acquire();
    const log: string[] = [];
    asRequest(() => {
      turn(q, log, 'a');
      turn(q, log, 'b');
    });
    // Both wait; the first is served, and takes its time.
    hold();
    await Promise.resolve();
    jest.advanceTimersByTime(2_000);
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(log).toEqual(['a', 'b']);
    expect(q.waiting().refused).toBe(0);
  });

  it('ends any other wait after the connect timeout, as the pool did', async () => {
    const q = queue(100, 3_000);
    await q.acquire(); // never given back: a statement queued behind its own transaction
    const job = asBackground(() => q.acquire());
    const unmarked = q.acquire();
    jest.advanceTimersByTime(3_000);
    await expect(job).rejects.toThrow('timeout exceeded when trying to connect');
    await expect(unmarked).rejects.toThrow('timeout exceeded when trying to connect');
    expect(q.waiting()).toEqual({ requests: 0, queries: 0, background: 0, refused: 0 });
  });

  it('serves a query before mutations that came in earlier, and queries in their order', async () => {
    const q = queue();
    const log = await served(q, (log) => {
      asRequest(() => turn(q, log, 'mutation'), 100);
      asQuery(() => turn(q, log, 'later query'), 300);
      asQuery(() => turn(q, log, 'query'), 200);
      asBackground(() => turn(q, log, 'job'));
    });
    expect(log).toEqual(['query', 'later query', 'mutation', 'job']);
  });

  it('moves a request marked a query once it knows its operation, for its later statements', async () => {
    const q = queue();
    const hold = await q.acquire();
    const log: string[] = [];
    asRequest(() => turn(q, log, 'mutation'), 100);
    asRequest(async () => {
      turn(q, log, 'before the operation was known');
      await Promise.resolve();
      markQuery();
      turn(q, log, 'query');
    }, 200);
    await Promise.resolve();
    hold();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    // The statement that asked before the mark keeps its place in the mutations' line.
    expect(log).toEqual(['query', 'mutation', 'before the operation was known']);
  });

  it('lets a mutation go first once it has waited half of the connect timeout', async () => {
    const q = queue(5_000, 1_000);
    const hold = await q.acquire();
    const log: string[] = [];
    asRequest(() => turn(q, log, 'mutation'));
    jest.advanceTimersByTime(500);
    asQuery(() => turn(q, log, 'query'));
    hold();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(log).toEqual(['mutation', 'query']);
  });

  it('hands out as many connections at once as it has slots', async () => {
    const q = queue(1_000, 10_000, 3);
    const held = await Promise.all([q.acquire(), q.acquire(), q.acquire()]);
    const log: string[] = [];
    turn(q, log, 'fourth');
    await Promise.resolve();
    expect(log).toEqual([]);
    expect(q.waiting().requests).toBe(1);
    held[1]();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(log).toEqual(['fourth']);
  });

  it('keeps a quarter of a pool open to background work under a crowd of requests', async () => {
    const q = queue(60_000, 60_000, 8);
    // Seven requests and a job hold all eight connections.
    const requests = await Promise.all(
      Array.from({ length: 7 }, () => asRequest(() => q.acquire())),
    );
    await asBackground(() => q.acquire());
    const log: string[] = [];
    // Taken and kept, so that each holds its connection.
    const take = (name: string) => () =>
      void q.acquire().then(() => {
        log.push(name);
      });
    asRequest(take('request'));
    asBackground(take('second job'));
    asBackground(take('third job'));
    const settle = async () => {
      for (let i = 0; i < 10; i++) await Promise.resolve();
    };
    // A job under its reserve of two goes first; at the reserve, the request does.
    requests[0]();
    await settle();
    expect(log).toEqual(['second job']);
    requests[1]();
    await settle();
    expect(log).toEqual(['second job', 'request']);
    expect(q.waiting()).toMatchObject({ requests: 0, background: 1 });
  });

  it('keeps the one connection of the embedded database for requests first, however many jobs wait', async () => {
    const q = queue();
    const log = await served(q, (log) => {
      asBackground(() => turn(q, log, 'job'));
      asRequest(() => turn(q, log, 'request'));
    });
    expect(log).toEqual(['request', 'job']);
  });
});
