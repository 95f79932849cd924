import { DataSource } from 'typeorm';
import { loadAppConfig } from '../../src/app.config.js';
import { PublicErrorCode } from '../../src/common/errors/domain.exception.js';
import { asBackground, asRequest, DatabaseQueue } from '../../src/database/database-queue.js';
import { databaseQueue, openDataSource } from '../../src/database/database.module.js';
import { DatabaseException } from '../../src/database/database.exception.js';
import {
  EmbeddedPostgres,
  EmbeddedThread,
  openEmbeddedPostgres,
} from '../../src/database/embedded-postgres.js';
import { createTestDatabase, TestDatabase } from '../support/test-database.js';

/**
 * The turns of the embedded database's one connection, on a real embedded database: requests in
 * the order they came, before background work, refused with nothing written past their bound;
 * and statements executed off the service's thread.
 *
 * @pass embedded: it opens an embedded database in either pass; the server's pool has the same
 * queue, tested in database-server.spec.ts.
 */
describe.each<EmbeddedThread>(['worker', 'main'])('the embedded database (%s thread)', (where) => {
  let db: TestDatabase;
  let embedded: EmbeddedPostgres;
  let ds: DataSource;
  let queue: DatabaseQueue;

  beforeAll(async () => {
    db = await createTestDatabase({ embedded: true });
    const config = loadAppConfig({
      ...db.env,
      JWT_SECRET: 'x'.repeat(32),
      DATABASE_QUEUE_TIMEOUT_MS: '400',
    });
    embedded = await openEmbeddedPostgres(db.dataDir, where);
    queue = databaseQueue(config);
    ds = await openDataSource(config, embedded, queue);
    await ds.query('CREATE TABLE served (id serial PRIMARY KEY, who text NOT NULL)');
  });
  afterAll(async () => {
    await ds?.destroy();
    await embedded?.close();
    await db?.remove();
  });
  beforeEach(() => ds.query('TRUNCATE served'));

  /** Holds the one connection in an open transaction until the function returned is called. */
  async function hold(): Promise<() => Promise<void>> {
    const runner = ds.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    return async () => {
      await runner.commitTransaction();
      await runner.release();
    };
  }

  const serve = (who: string): Promise<unknown> =>
    ds.query('INSERT INTO served (who) VALUES ($1)', [who]);
  const served = async () =>
    ((await ds.query('SELECT who FROM served ORDER BY id')) as { who: string }[]).map((r) => r.who);
  async function until(check: () => boolean): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('the queue never got there');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it('serves requests in the order they came in, and each before background work', async () => {
    const release = await hold();
    const now = performance.now();
    const statements = [
      asBackground(() => serve('job')),
      asRequest(() => serve('request that came second'), now - 100),
      asRequest(() => serve('request that came first'), now - 200),
    ];
    await until(() => queue.waiting().requests === 2 && queue.waiting().background === 1);
    await release();
    await Promise.all(statements);
    expect(await served()).toEqual(['request that came first', 'request that came second', 'job']);
  });

  it('refuses a request that could not begin within its bound, having written nothing', async () => {
    const release = await hold();
    const refused = asRequest(() => serve('refused')).catch((err: unknown) => err);
    const started = Date.now();
    const err = await refused;
    expect(Date.now() - started).toBeLessThan(5_000);
    await release();
    expect(err).toBeInstanceOf(DatabaseException);
    expect(err).toMatchObject({
      publicCode: PublicErrorCode.UNAVAILABLE,
      reason: 'DATABASE_BUSY',
      retryAfterSeconds: 1,
    });
    expect(await served()).toEqual([]);
    expect(queue.waiting().refused).toBeGreaterThan(0);
  });

  it('lets background work wait past the bound of requests', async () => {
    const release = await hold();
    const job = asBackground(() => serve('job'));
    await new Promise((r) => setTimeout(r, 700));
    await release();
    await job;
    expect(await served()).toEqual(['job']);
  });

  it(
    where === 'worker'
      ? 'keeps the event loop free while a long statement runs'
      : 'stalls the event loop while a long statement runs',
    async () => {
      let last = performance.now();
      let longest = 0;
      const tick = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }, 10);
      try {
        await ds.query('SELECT pg_sleep(1.5)');
      } finally {
        clearInterval(tick);
      }
      // Without a tick while it ran, the longest wait is the whole statement.
      longest = Math.max(longest, performance.now() - last);
      if (where === 'worker') expect(longest).toBeLessThan(750);
      else expect(longest).toBeGreaterThanOrEqual(1_400);
    },
  );
});
