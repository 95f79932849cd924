import { DataSource } from 'typeorm';
import { EmbeddingService } from '../../src/embeddings/embedding.service.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp } from '../support/test-app.js';

/**
 * Vectors record their model; an outage defers embedding to the sweeper; a model change fills
 * the new model beside the old one and switches search over only when it is complete.
 * Uses a scratch table registered as its own kind, as feature modules register theirs.
 */
const KIND = { kind: 'note', table: 'scratch_notes', textSql: 'i.content' };

function openaiEnv(fake: FakeOpenAiServer, model: string, dimensions: number) {
  return {
    EMBEDDINGS: 'openai',
    EMBEDDINGS_BASE_URL: fake.url,
    EMBEDDINGS_MODEL: model,
    EMBEDDINGS_DIMENSIONS: String(dimensions),
    MODEL_MAX_RETRIES: '0',
    MODEL_TIMEOUT_MS: '2000',
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
  };
}

async function vectorCounts(ds: DataSource): Promise<Record<string, number>> {
  const rows: { model: string; n: string }[] = await ds.query(
    `SELECT model, count(*) AS n FROM embeddings WHERE kind = 'note' GROUP BY model`,
  );
  return Object.fromEntries(rows.map((r) => [r.model, Number(r.n)]));
}

async function addNotes(t: TestApp, texts: string[]): Promise<string[]> {
  const ds = t.app.get(DataSource);
  const embeddings = t.app.get(EmbeddingService);
  const embedded = await embeddings.embedForStorage(texts);
  const ids: string[] = [];
  for (const text of texts) {
    const [row] = await ds.query(`INSERT INTO scratch_notes (content) VALUES ($1) RETURNING id`, [
      text,
    ]);
    ids.push(row.id);
  }
  await embeddings.store(
    KIND.kind,
    ids.map((id) => ({ id })),
    embedded,
  );
  return ids;
}

describe('Embeddings: outages and model switch-over', () => {
  let fake: FakeOpenAiServer;
  let t: TestApp;
  let databaseEnv: Record<string, string>;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp(openaiEnv(fake, 'embed-a', 16), { keepData: true });
    databaseEnv = t.databaseEnv;
    const ds = t.app.get(DataSource);
    await ds.query(
      `CREATE TABLE scratch_notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), content text NOT NULL)`,
    );
    await ds.query(`CREATE TRIGGER scratch_notes_forget AFTER DELETE ON scratch_notes
                      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('note')`);
    t.app.get(EmbeddingService).registerKind(KIND);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('stores text without a vector while the model is down, and the sweeper embeds it later', async () => {
    const embeddings = t.app.get(EmbeddingService);
    fake.enqueue('embeddings', reply.error(503));
    await addNotes(t, ['He fixed clocks in his shed.']);
    expect(await vectorCounts(t.app.get(DataSource))).toEqual({});
    // Feature modules register their own kinds too; this test follows its scratch kind only.
    expect((await embeddings.status()).kinds.filter((k) => k.kind === 'note')).toEqual([
      { kind: 'note', total: 1, embedded: 0, missing: 1 },
    ]);

    // Still down: the sweep stops without losing anything.
    fake.enqueue('embeddings', reply.error(500));
    expect(await embeddings.sweep()).toBe(0);

    expect(await embeddings.sweep()).toBe(1);
    expect(await vectorCounts(t.app.get(DataSource))).toEqual({ 'openai:embed-a': 1 });
    // Nothing left to do: a second sweep changes nothing.
    expect(await embeddings.sweep()).toBe(0);
    expect(await vectorCounts(t.app.get(DataSource))).toEqual({ 'openai:embed-a': 1 });
  });

  it('deletes the vectors of a deleted row', async () => {
    const ds = t.app.get(DataSource);
    const [id] = await addNotes(t, ['A note to delete.']);
    expect(await vectorCounts(ds)).toEqual({ 'openai:embed-a': 2 });
    await ds.query(`DELETE FROM scratch_notes WHERE id = $1`, [id]);
    expect(await vectorCounts(ds)).toEqual({ 'openai:embed-a': 1 });
  });

  it('re-embeds in the background on a model change and switches search over when complete', async () => {
    await addNotes(t, ['She sang in the choir.', 'They married in 1961.']);
    await t.close();

    // The same database, restarted with another model of another size.
    t = await startTestApp({ ...openaiEnv(fake, 'embed-b', 24), ...databaseEnv });
    t.app.get(EmbeddingService).registerKind(KIND);
    const embeddings = t.app.get(EmbeddingService);
    const ds = t.app.get(DataSource);

    const before = await embeddings.status();
    expect(before).toMatchObject({
      activeModel: 'openai:embed-a',
      configuredModel: 'openai:embed-b',
      dimensions: 24,
      reembedding: true,
    });
    expect(before.models.map((m) => [m.model, m.state]).sort()).toEqual([
      ['openai:embed-a', 'ACTIVE'],
      ['openai:embed-b', 'BUILDING'],
    ]);
    // Search stays on the complete old model meanwhile: never a mix.
    expect(await embeddings.searchModel()).toEqual({ model: 'openai:embed-a', dimensions: 16 });

    // The first attempt meets an outage; the job is retried, not lost.
    fake.enqueue('embeddings', reply.error(500));
    const jobs = t.app.get(JobsService);
    await expect(
      jobs.runHandler('embeddings:reembed', { model: 'openai:embed-b' }),
    ).rejects.toThrow(/incomplete/);
    expect((await embeddings.status()).activeModel).toBe('openai:embed-a');

    await jobs.runHandler('embeddings:reembed', { model: 'openai:embed-b' });
    const after = await embeddings.status();
    expect(after).toMatchObject({ activeModel: 'openai:embed-b', reembedding: false });
    expect(after.kinds.filter((k) => k.kind === 'note')).toEqual([
      { kind: 'note', total: 3, embedded: 3, missing: 0 },
    ]);
    expect(await embeddings.searchModel()).toEqual({ model: 'openai:embed-b', dimensions: 24 });
    // The old model's vectors are gone once nothing searches them.
    expect(await vectorCounts(ds)).toEqual({ 'openai:embed-b': 3 });
    const query = await embeddings.embedQuery('choir');
    expect(query).toMatchObject({ model: 'openai:embed-b', dimensions: 24 });
    expect(query!.vector).toHaveLength(24);

    // Running the job again changes nothing.
    await jobs.runHandler('embeddings:reembed', { model: 'openai:embed-b' });
    expect(await vectorCounts(ds)).toEqual({ 'openai:embed-b': 3 });
    expect((await embeddings.status()).models.map((m) => [m.model, m.state]).sort()).toEqual([
      ['openai:embed-a', 'RETIRED'],
      ['openai:embed-b', 'ACTIVE'],
    ]);
  });
});
