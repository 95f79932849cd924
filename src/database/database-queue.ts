import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { DatabaseException } from './database.exception.js';

/**
 * The embedded database is one PostgreSQL session behind a pool of one connection, so every
 * statement of every request and job takes its turn on it. `pg`'s pool served those turns
 * statement by statement: a request of twenty statements went to the back of the line twenty
 * times behind everyone else's, and background work (indexing, summaries) stood in the same
 * line. This queue hands out the connection instead by the work each statement is done for:
 *
 * - requests in the order they came in (a statement of an older request goes before one of a
 *   newer request, wherever each is in its own work), so a request waits about once;
 * - before background work, which goes first only once it has waited half of
 *   DB_CONNECT_TIMEOUT_MS, so it is slowed under load but never starved;
 * - a request that could not begin within DATABASE_QUEUE_TIMEOUT_MS is refused (UNAVAILABLE,
 *   DATABASE_BUSY, with retryAfterSeconds) before its first statement runs. Once one of its
 *   statements has run it is never refused, so a request either did nothing or runs to its end.
 *
 * What work a statement belongs to travels with the async calls (AsyncLocalStorage): the HTTP
 * middleware and the WebSocket executor mark requests, the job worker marks background work.
 * Anything else (boot, tests) counts as a request that came in with the statement and is never
 * refused. Every wait that cannot be refused still ends after DB_CONNECT_TIMEOUT_MS with the
 * error `pg`'s pool gave, so a statement queued behind its own open transaction fails rather
 * than hangs.
 */
interface Work {
  background: boolean;
  /** When the work came in (performance.now()): its place in the queue. */
  since: number;
  /** When it first waited for the connection, for its bound. */
  firstWait?: number;
  /** One of its statements was served: it is never refused after that. */
  admitted: boolean;
  /** It was refused: so is every later statement of it. */
  refused: boolean;
}

const current = new AsyncLocalStorage<Work>();

/** Runs `fn` as one request (an HTTP request, a WebSocket operation) that came in at `since`. */
export function asRequest<T>(fn: () => T, since = performance.now()): T {
  return current.run({ background: false, since, admitted: false, refused: false }, fn);
}

/** Runs `fn` as background work: its statements wait behind every request's. */
export function asBackground<T>(fn: () => T): T {
  return current.run(
    { background: true, since: performance.now(), admitted: true, refused: false },
    fn,
  );
}

export interface DatabaseQueueOptions {
  /** How long a request may wait to begin. */
  requestTimeoutMs: number;
  /** The longest any other wait may last (DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
}

interface Waiter {
  work: Work;
  seq: number;
  queuedAt: number;
  grant: (release: () => void) => void;
  fail: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/** Before: older work first, then the order of the calls. */
const before = (a: Waiter, b: Waiter) =>
  a.work.since < b.work.since || (a.work.since === b.work.since && a.seq < b.seq);

function insertOrdered(list: Waiter[], w: Waiter): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(list[mid], w)) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, w);
}

export class DatabaseQueue {
  private held = false;
  private seq = 0;
  private readonly requests: Waiter[] = [];
  private readonly background: Waiter[] = [];
  private refusedCount = 0;

  constructor(
    private readonly options: DatabaseQueueOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Waits for the connection's turn; the function returned gives it back (once). */
  acquire(): Promise<() => void> {
    const now = this.now();
    const work = current.getStore() ?? {
      background: false,
      since: now,
      admitted: true,
      refused: false,
    };
    if (work.refused) return Promise.reject(this.busy());
    if (!this.held) {
      this.take(work);
      return Promise.resolve(this.releaser());
    }
    work.firstWait ??= now;
    return new Promise((grant, fail) => {
      const waiter: Waiter = { work, seq: this.seq++, queuedAt: now, grant, fail };
      insertOrdered(work.background ? this.background : this.requests, waiter);
      const refusable = !work.background && !work.admitted;
      const wait = refusable
        ? work.firstWait! + this.options.requestTimeoutMs - now
        : this.options.connectTimeoutMs;
      waiter.timer = setTimeout(() => this.expire(waiter, refusable), Math.max(0, wait));
      waiter.timer.unref();
    });
  }

  /** Waiting now, for tests and health: requests and background work. */
  waiting(): { requests: number; background: number; refused: number } {
    return {
      requests: this.requests.length,
      background: this.background.length,
      refused: this.refusedCount,
    };
  }

  private take(work: Work): void {
    this.held = true;
    if (!work.background) work.admitted = true;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held = false;
      this.next();
    };
  }

  private next(): void {
    const waiter = this.pick();
    if (!waiter) return;
    const list = waiter.work.background ? this.background : this.requests;
    list.splice(list.indexOf(waiter), 1);
    clearTimeout(waiter.timer);
    this.take(waiter.work);
    waiter.grant(this.releaser());
  }

  /** The oldest request, unless background work has waited too long or nothing else waits. */
  private pick(): Waiter | undefined {
    const job = this.background[0];
    if (!job) return this.requests[0];
    const starved = this.now() - job.queuedAt >= this.options.connectTimeoutMs / 2;
    return this.requests.length === 0 || starved ? job : this.requests[0];
  }

  private expire(waiter: Waiter, refusable: boolean): void {
    const list = waiter.work.background ? this.background : this.requests;
    const at = list.indexOf(waiter);
    if (at < 0) return;
    if (refusable && waiter.work.admitted) {
      // A statement of the same request was served: it may not stop half-way now.
      const left = waiter.queuedAt + this.options.connectTimeoutMs - this.now();
      waiter.timer = setTimeout(() => this.expire(waiter, false), Math.max(0, left));
      waiter.timer.unref();
      return;
    }
    list.splice(at, 1);
    if (refusable) {
      waiter.work.refused = true;
      this.refusedCount++;
      waiter.fail(this.busy());
    } else {
      waiter.fail(new Error('timeout exceeded when trying to connect'));
    }
  }

  private busy(): DatabaseException {
    return DatabaseException.busy(Math.max(1, Math.ceil(this.options.requestTimeoutMs / 1000)));
  }
}
