import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app.js';

/** The indexes search depends on, on whichever database the suite runs (embedded or server). */
describe('search indexes after migrations and boot', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
  });
  afterAll(() => t.close());

  const indexes = async (method: string) =>
    (
      (await t.app.get(DataSource).query(
        `SELECT tablename || '.' || indexname AS name FROM pg_indexes
            WHERE indexdef ~ ('USING ' || $1 || ' ') ORDER BY 1`,
        [method],
      )) as { name: string }[]
    ).map((r) => r.name);

  it('has GIN full-text and trigram indexes on every searchable table', async () => {
    const gin = await indexes('gin');
    for (const table of ['message_segments', 'conversation_chunks', 'facts', 'memories']) {
      expect(gin).toEqual(
        expect.arrayContaining([
          `${table}.${table}_search_tsv_idx`,
          `${table}.${table}_content_trgm_idx`,
        ]),
      );
    }
  });

  it('has an HNSW index per embedded kind for the configured model', async () => {
    const hnsw = await indexes('hnsw');
    for (const kind of ['segment', 'summary', 'fact', 'memory']) {
      expect(hnsw.some((name) => name.startsWith(`embeddings.embeddings_hnsw_${kind}_`))).toBe(
        true,
      );
    }
  });
});
