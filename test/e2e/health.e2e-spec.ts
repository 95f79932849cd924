import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';

describe('GET /health/ready', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
  });
  afterAll(() => t.close());

  it('says the database is down without echoing what the database said', async () => {
    const ready = () => fetch(t.url.replace('/graphql', '/health/ready'));
    expect((await ready()).status).toBe(200);
    await t.app.get(DataSource).destroy();
    const res = await ready();
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'unavailable',
      database: { status: 'down' },
      // The disk the embedded database writes to is the service's own to watch; a server's is not.
      storage: ON_SERVER ? { status: 'ok' } : { status: 'ok', freeBytes: expect.any(Number) },
      // Scheduled backups are the embedded database's (off in the suite).
      ...(ON_SERVER ? {} : { backup: { schedule: null, lastGoodAt: null, ageSeconds: null } }),
      embeddings: { model: 'local:use-lite-512' },
      llm: { model: 'local:heuristic', generates: false },
    });
  });
});
