import { DataSource } from 'typeorm';
import { serverLocator } from '../../src/database/server-locator.js';
import { PgNotifyTransport } from '../../src/pubsub/notify-transport.js';
import { startTestApp, TestApp } from '../support/test-app.js';

/**
 * The server transport's parking table through TypeORM, as on a server: what it parks it reads
 * back, and pruning answers how many payloads it deleted. (LISTEN needs a server connection of
 * its own and is not used here.)
 */
describe('PgNotifyTransport parking', () => {
  let t: TestApp;
  let transport: PgNotifyTransport;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    transport = new PgNotifyTransport(
      t.app.get(DataSource),
      serverLocator('postgres://unused', 1000),
    );
  }, 120_000);
  afterAll(() => t.close());

  it('reads back what it parked and counts the payloads a prune deletes', async () => {
    const ids = [];
    for (const body of ['one', 'two', 'three']) ids.push(await transport.park(body));
    expect(await transport.fetchParked(ids[1])).toBe('two');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await transport.pruneParked(0)).toBe(3);
    expect(await transport.fetchParked(ids[1])).toBeNull();
    expect(await transport.pruneParked(0)).toBe(0);
  });
});
