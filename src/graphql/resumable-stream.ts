/** Where a resumed stream's log is read from, page by page. */
export interface ResumeLog<T> {
  /**
   * The index to resume after, read once live events are already being kept: the client's,
   * lowered to the log's last index when the log ends before it (a failover that lost turns
   * the client had seen: the turns stored since under those indexes are new to it).
   */
  start(): Promise<number>;
  /** Up to `pageSize` events of the log after `index`, in index order. */
  after(index: number): Promise<T[]>;
  pageSize: number;
  /** An event's index: gapless and increasing in the log. */
  indexOf(event: T): number;
}

/**
 * A stream that first sends every event the log holds after an index, then goes on live, with
 * no gap and no duplicate. It listens before it reads: the live source is asked for its first
 * event at once (a PubSub iterator registers then, and keeps what arrives meanwhile in its
 * queue); the log is then read page by page until a page comes back short; live events follow,
 * but for those the log already gave. The log's indexes are a gapless prefix (an index is
 * taken only once the one before committed), so a live event at or below the last index read
 * was read, and any other was not.
 */
export function resumeAfter<T>(
  live: AsyncIterableIterator<T>,
  log: ResumeLog<T>,
): AsyncIterableIterator<T> {
  let pendingLive: Promise<IteratorResult<T>> | null = live.next();
  // Nothing becomes of a rejection before the replay ends: it is awaited (and thrown) then.
  pendingLive.catch(() => undefined);
  let readUpTo: number | null = null;
  let logDone = false;
  let closed = false;
  const page: T[] = [];
  const done = (): IteratorResult<T> => ({ done: true, value: undefined });

  return {
    async next() {
      while (!closed) {
        if (readUpTo === null) readUpTo = await log.start();
        const replayed = page.shift();
        if (replayed !== undefined) return { done: false, value: replayed };
        if (!logDone) {
          const rows = await log.after(readUpTo);
          if (rows.length < log.pageSize) logDone = true;
          if (rows.length > 0) readUpTo = log.indexOf(rows[rows.length - 1]);
          page.push(...rows);
          continue;
        }
        const step = await (pendingLive ?? live.next());
        pendingLive = null;
        if (step.done) return step;
        if (log.indexOf(step.value) > readUpTo) return step;
      }
      return done();
    },
    async return() {
      closed = true;
      page.length = 0;
      await live.return?.();
      return done();
    },
    async throw(err: unknown) {
      closed = true;
      await live.return?.();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
