import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { DatabaseException } from './database.exception.js';

/**
 * The turns of the database's connections, handed out by the work each statement is done for.
 * The embedded database is one PostgreSQL session behind a pool of one connection, so every
 * statement of every request and job takes its turn on it; a server's pool has
 * DATABASE_POOL_SIZE of them. `pg`'s pool served those turns statement by statement: a request
 * of twenty statements went to the back of the line twenty times behind everyone else's, and
 * background work (indexing, summaries) stood in the same line. This queue serves:
 *
 * - GraphQL queries (reads someone is waiting on: recall, lists) before mutations, so that a
 *   read never waits behind a crowd of senders' statements; a mutation goes first once it has
 *   waited half of DB_CONNECT_TIMEOUT_MS, so it is slowed under load but never starved;
 * - within each, requests in the order they came in (a statement of an older request goes
 *   before one of a newer request, wherever each is in its own work), so a request waits about
 *   once;
 * - requests before background work, which goes first once it has waited half of
 *   DB_CONNECT_TIMEOUT_MS; on a pool of several connections a quarter of them are always open
 *   to background work (JOBS_CONCURRENCY bounds how much of it there is), so that indexing and
 *   summaries go on under a crowd of requests rather than in five-second steps;
 * - a request that could not begin within DATABASE_QUEUE_TIMEOUT_MS is refused (UNAVAILABLE,
 *   DATABASE_BUSY, with retryAfterSeconds) before its first statement runs. Once one of its
 *   statements has run it is never refused, so a request either did nothing or runs to its end.
 *
 * What work a statement belongs to travels with the async calls (AsyncLocalStorage): the HTTP
 * middleware and the WebSocket executor mark requests (and GraphQL marks queries once it knows
 * the operation), the job worker marks background work. Anything else (boot, tests) counts as a
 * request that came in with the statement and is never refused. Every wait that cannot be
 * refused still ends after DB_CONNECT_TIMEOUT_MS with the error `pg`'s pool gave, so a statement
 * queued behind its own open transaction fails rather than hangs.
 */
interface Work {
  background: boolean;
  /** A GraphQL query: served before mutations. */
  query?: boolean;
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

/**
 * Marks the request under way as a GraphQL query (a read someone waits on), once the operation
 * is known: its later statements go before mutations'.
 */
export function markQuery(): void {
  const work = current.getStore();
  if (work && !work.background) work.query = true;
}

export interface DatabaseQueueOptions {
  /** How long a request may wait to begin. */
  requestTimeoutMs: number;
  /** The longest any other wait may last (DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Connections handed out at once: 1 embedded, the pool's size on a server. */
  slots?: number;
}

interface Waiter {
  work: Work;
  /** The line it stands in (a request may be marked a query after it began waiting). */
  line: Waiter[];
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
  private inUse = 0;
  private backgroundInUse = 0;
  private seq = 0;
  private readonly queries: Waiter[] = [];
  private readonly mutations: Waiter[] = [];
  private readonly background: Waiter[] = [];
  private refusedCount = 0;
  private readonly slots: number;
  private readonly backgroundReserve: number;

  constructor(
    private readonly options: DatabaseQueueOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.slots = Math.max(1, options.slots ?? 1);
    this.backgroundReserve = Math.floor(this.slots / 4);
  }

  /** Waits for a connection's turn; the function returned gives it back (once). */
  acquire(): Promise<() => void> {
    const now = this.now();
    const work = current.getStore() ?? {
      background: false,
      since: now,
      admitted: true,
      refused: false,
    };
    if (work.refused) return Promise.reject(this.busy());
    if (this.inUse < this.slots) {
      this.take(work);
      return Promise.resolve(this.releaser(work));
    }
    work.firstWait ??= now;
    return new Promise((grant, fail) => {
      const line = work.background ? this.background : work.query ? this.queries : this.mutations;
      const waiter: Waiter = { work, line, seq: this.seq++, queuedAt: now, grant, fail };
      insertOrdered(line, waiter);
      const refusable = !work.background && !work.admitted;
      const wait = refusable
        ? work.firstWait! + this.options.requestTimeoutMs - now
        : this.options.connectTimeoutMs;
      waiter.timer = setTimeout(() => this.expire(waiter, refusable), Math.max(0, wait));
      waiter.timer.unref();
    });
  }

  /** Waiting now, for tests and health: requests (queries among them) and background work. */
  waiting(): { requests: number; queries: number; background: number; refused: number } {
    return {
      requests: this.queries.length + this.mutations.length,
      queries: this.queries.length,
      background: this.background.length,
      refused: this.refusedCount,
    };
  }

  private take(work: Work): void {
    this.inUse++;
    if (work.background) this.backgroundInUse++;
    else work.admitted = true;
  }

  private releaser(work: Work): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      if (work.background) this.backgroundInUse--;
      this.next();
    };
  }

  private next(): void {
    const waiter = this.pick();
    if (!waiter) return;
    waiter.line.splice(waiter.line.indexOf(waiter), 1);
    clearTimeout(waiter.timer);
    this.take(waiter.work);
    waiter.grant(this.releaser(waiter.work));
  }

  /**
   * The oldest query, then the oldest mutation, then background work; a mutation or background
   * work that has waited half of the connect timeout goes first, and background work does while
   * it holds fewer connections than its reserve.
   */
  private pick(): Waiter | undefined {
    const starved = (w: Waiter | undefined) =>
      w !== undefined && this.now() - w.queuedAt >= this.options.connectTimeoutMs / 2;
    const job = this.background[0];
    if (job && (this.backgroundInUse < this.backgroundReserve || starved(job))) return job;
    if (starved(this.mutations[0])) return this.mutations[0];
    return this.queries[0] ?? this.mutations[0] ?? this.background[0];
  }

  private expire(waiter: Waiter, refusable: boolean): void {
    const at = waiter.line.indexOf(waiter);
    if (at < 0) return;
    if (refusable && waiter.work.admitted) {
      // A statement of the same request was served: it may not stop half-way now.
      const left = waiter.queuedAt + this.options.connectTimeoutMs - this.now();
      waiter.timer = setTimeout(() => this.expire(waiter, false), Math.max(0, left));
      waiter.timer.unref();
      return;
    }
    waiter.line.splice(at, 1);
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
