import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app.js';

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
      embeddings: { model: 'local:use-lite-512' },
      llm: { model: 'local:heuristic', generates: false },
    });
  });
});
