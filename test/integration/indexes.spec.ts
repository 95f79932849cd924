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

  it('keeps vectors in their rows (MAIN storage), not in the TOAST table', async () => {
    const ds = t.app.get(DataSource);
    const [{ storage }] = (await ds.query(
      `SELECT attstorage AS storage FROM pg_attribute
        WHERE attrelid = 'embeddings'::regclass AND attname = 'embedding'`,
    )) as { storage: string }[];
    expect(storage).toBe('m');
    const [{ toast }] = (await ds.query(
      `SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE relname = 'embeddings'`,
    )) as { toast: string }[];
    const chunks = async () =>
      ((await ds.query(`SELECT count(*)::int AS n FROM ${toast}`)) as { n: number }[])[0].n;
    const before = await chunks();
    // Random values, which compression cannot shrink into the row.
    await ds.query(
      `INSERT INTO embeddings (kind, item_id, model, embedding)
       SELECT 'probe', gen_random_uuid(), 'probe-512',
              (SELECT array_agg(random())::real[] FROM generate_series(1, 512) WHERE g > 0)::vector
         FROM generate_series(1, 20) AS g`,
    );
    const [{ size }] = (await ds.query(
      `SELECT min(pg_column_size(embedding))::int AS size FROM embeddings WHERE kind = 'probe'`,
    )) as { size: number }[];
    expect(size).toBeGreaterThan(512 * 4);
    expect(await chunks()).toBe(before);
    await ds.query(`DELETE FROM embeddings WHERE kind = 'probe'`);
  });
});
