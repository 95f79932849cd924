import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';
import { HEALTH_TOKEN } from '../support/health.js';

const METRICS_TOKEN = HEALTH_TOKEN;

describe('GET /health/ready', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', METRICS_TOKEN });
  });
  afterAll(() => t.close());

  const ready = (authorization?: string) =>
    fetch(t.url.replace('/graphql', '/health/ready'), {
      headers: authorization ? { authorization } : {},
    });

  /** What lies behind the answer, for whoever holds METRICS_TOKEN. */
  const details = {
    // The disk the embedded database writes to is the service's own to watch; a server's is not.
    storage: ON_SERVER ? { status: 'ok' } : { status: 'ok', freeBytes: expect.any(Number) },
    // Scheduled backups are the embedded database's (off in the suite).
    ...(ON_SERVER ? {} : { backup: { schedule: null, lastGoodAt: null, ageSeconds: null } }),
    embeddings: { model: 'local:use-lite-512' },
    llm: { model: 'local:heuristic', generates: false },
  };

  it('says only whether it is ready, unless asked with METRICS_TOKEN', async () => {
    for (const anonymous of [undefined, 'Bearer not-the-token', `Basic ${METRICS_TOKEN}`]) {
      const res = await ready(anonymous);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    }
    const res = await ready(`Bearer ${METRICS_TOKEN}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ok',
      database: { status: 'up', latencyMs: expect.any(Number) },
      ...details,
    });
  });

  it('says the database is down without echoing what the database said', async () => {
    await t.app.get(DataSource).destroy();
    const res = await ready();
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable' });
    const detailed = await ready(`Bearer ${METRICS_TOKEN}`);
    expect(detailed.status).toBe(503);
    expect(await detailed.json()).toEqual({
      status: 'unavailable',
      database: { status: 'down' },
      ...details,
    });
  });
});
