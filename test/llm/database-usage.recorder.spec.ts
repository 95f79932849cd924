import { DataSource } from 'typeorm';
import { loadAppConfig } from '../../src/app.config.js';
import { openDataSource } from '../../src/database/database.module.js';
import { EmbeddedPostgres, openEmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import { DatabaseUsageRecorder } from '../../src/llm/database-usage.recorder.js';
import { LocalLanguageModel } from '../../src/llm/local-llm.provider.js';
import { ModelCallEntity } from '../../src/llm/model-call.entity.js';
import { createTestDatabase, TestDatabase } from '../support/test-database.js';

describe('DatabaseUsageRecorder', () => {
  let db: TestDatabase;
  let embedded: EmbeddedPostgres | null;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = loadAppConfig({ ...db.env, JWT_SECRET: 'x'.repeat(32) });
    embedded = config.embedded ? await openEmbeddedPostgres(db.dataDir) : null;
    dataSource = await openDataSource(config, embedded);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await embedded?.close();
    await db?.remove();
  });

  it('writes every call to model_calls', async () => {
    const recorder = new DatabaseUsageRecorder(dataSource);
    const llm = new LocalLanguageModel(recorder);
    await llm.extractMemories({ userTurn: 'I live in Leeds.' });
    recorder.record({
      task: 'reply',
      model: 'openai:fake-llm',
      promptTokens: 120,
      completionTokens: 30,
      durationMs: 812,
      attempts: 3,
      ok: false,
      error: 'openai:fake-llm reply failed after 3 attempt(s): 503',
      promptVersion: 'reply/1',
    });
    await recorder.flush();

    const rows = await dataSource
      .getRepository(ModelCallEntity)
      .find({ order: { createdAt: 'ASC', task: 'ASC' } });
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.task === 'extractMemories')).toMatchObject({
      model: 'local:heuristic',
      ok: true,
      attempts: 1,
      usageEstimated: true,
      promptVersion: 'extract-memories/2',
      error: null,
    });
    expect(rows.find((r) => r.task === 'reply')).toMatchObject({
      promptTokens: 120,
      completionTokens: 30,
      durationMs: 812,
      attempts: 3,
      ok: false,
      usageEstimated: false,
    });
  });
});
