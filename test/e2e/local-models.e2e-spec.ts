import { jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { EmbeddingService } from '../../src/embeddings/embedding.service.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { cacheFolder, defaultModelsDir } from '../../src/llm/model-files.js';
import { SENTENCE_MODELS } from '../../src/llm/sentence-models.js';
import { HEALTH_TOKEN, readyDetails } from '../support/health.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * The local encoders as the service runs them: the default (fetched once by `npm run
 * models:fetch`, from the shared cache, no network at test time), a switch between two models
 * while recall keeps answering, USE-lite when the fetched model is missing, and a refusal of an
 * air-gapped folder whose files are not the pinned ones.
 */
const E5 = SENTENCE_MODELS['e5-small-v2'];
const BGE = SENTENCE_MODELS['bge-small-en-v1.5'];

const TURNS = [
  'Grandpa Joe grew tomatoes and beans in the allotment behind the church.',
  'He repaired old radios on the kitchen table every winter evening.',
  'Joe served as a navy radio operator on a destroyer in the Pacific.',
  'His favourite dish was his mother’s goulash with caraway seeds.',
  'He sang bass in the village choir until he was eighty.',
  'Joe and Rose married in 1961 at St. Anne’s in Cleveland.',
];

const RECALL = `query($l: ID!, $q: String!) {
  recall(legacyId: $l, query: $q, first: 8) { edges { node { text } } }
}`;

// With the token that opens /health/ready's details (the encoder it names).
const JOBS_OFF = { JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', METRICS_TOKEN: HEALTH_TOKEN };

async function ready(t: TestApp) {
  return (await readyDetails<{ embeddings: { model: string; notice?: string } }>(t.url)).body;
}

jest.setTimeout(180_000);

describe('Local sentence encoders (e2e)', () => {
  let t: TestApp;
  let owner: TestUser;
  let legacyId: string;
  let databaseEnv: Record<string, string>;

  const recall = async (q: string) => {
    const res = await t.gql<{ recall: { edges: { node: { text: string } }[] } }>(
      RECALL,
      { l: legacyId, q },
      owner,
    );
    expect(res.errors).toBeUndefined();
    // The member's own turns (the agent's replies are alike and carry no topic).
    return res.data!.recall.edges.map((e) => e.node.text).filter((text) => TURNS.includes(text));
  };

  beforeAll(async () => {
    t = await startTestApp(
      { ...JOBS_OFF, EMBEDDINGS_LOCAL_MODEL: 'e5-small-v2' },
      { keepData: true },
    );
    databaseEnv = t.databaseEnv;
    owner = await t.user('local-models-owner');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      {},
      owner,
    );
    legacyId = created.data!.createLegacy.id;
    // As people talk: each thing told, then the agent's reply (a turn is embedded with the end
    // of the one before it).
    const messages = TURNS.flatMap((content, i) => [
      {
        role: 'USER',
        content,
        occurredAt: new Date(Date.UTC(2023, 4, 1, 10, 2 * i)).toISOString(),
      },
      {
        role: 'ASSISTANT',
        content: 'Thank you for telling me. What else do you remember?',
        occurredAt: new Date(Date.UTC(2023, 4, 1, 10, 2 * i + 1)).toISOString(),
      },
    ]);
    const imported = await t.gql(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
      { input: { legacyId, title: 'Joe', messages } },
      owner,
    );
    expect(imported.errors).toBeUndefined();
    await t.app.get(JobsService).drain({ timeoutMs: 120_000 });
  }, 180_000);
  afterAll(() => t?.close());

  it('runs the fetched model, records it with the data, and finds by meaning', async () => {
    expect((await ready(t)).embeddings).toEqual({ model: E5.modelId });
    expect(await t.app.get(EmbeddingService).status()).toMatchObject({
      activeModel: E5.modelId,
      configuredModel: E5.modelId,
      dimensions: 384,
      reembedding: false,
    });
    const models = await t.app
      .get(DataSource)
      .query(`SELECT DISTINCT model FROM embeddings WHERE kind = 'segment'`);
    expect(models).toEqual([{ model: E5.modelId }]);
    // No word in common with the turns that answer.
    expect((await recall('Which meal did he love most?'))[0]).toContain('goulash');
    expect((await recall('Did he perform music?'))[0]).toContain('choir');
  });

  it('switching models re-embeds in the background while recall keeps answering', async () => {
    await t.close();
    t = await startTestApp(
      { ...JOBS_OFF, ...databaseEnv, EMBEDDINGS_LOCAL_MODEL: BGE.name },
      {
        keepData: true,
      },
    );
    const embeddings = t.app.get(EmbeddingService);
    expect(await embeddings.status()).toMatchObject({
      activeModel: E5.modelId,
      configuredModel: BGE.modelId,
      reembedding: true,
    });
    // Meanwhile search stays on the old model's complete vectors, by meaning still.
    expect((await recall('Which meal did he love most?'))[0]).toContain('goulash');

    await t.app.get(JobsService).drain({ timeoutMs: 120_000 });
    const after = await embeddings.status();
    expect(after).toMatchObject({ activeModel: BGE.modelId, reembedding: false });
    expect(after.kinds.every((k) => k.missing === 0)).toBe(true);
    expect((await recall('Which meal did he love most?'))[0]).toContain('goulash');
    expect((await recall('Did he perform music?'))[0]).toContain('choir');
  });

  it('embeds with USE-lite, and says so, when the fetched model is not in the cache', async () => {
    const other = await startTestApp({
      ...JOBS_OFF,
      EMBEDDINGS_LOCAL_MODEL: 'e5-small-v2',
      MODELS_DIR: mkdtempSync(join(tmpdir(), 'ks-no-models-')),
    });
    try {
      const health = await ready(other);
      expect(health.embeddings.model).toBe('local:use-lite-512');
      expect(health.embeddings.notice).toMatch(
        /e5-small-v2 is not in .*npm run models:fetch.*Universal Sentence Encoder lite/,
      );
    } finally {
      await other.close();
    }
  });

  it('refuses to start on an air-gapped folder whose files are not the pinned ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-model-dir-'));
    writeFileSync(join(dir, 'model.onnx'), 'not the model');
    await expect(
      startTestApp({
        ...JOBS_OFF,
        EMBEDDINGS_LOCAL_MODEL: 'e5-small-v2',
        EMBEDDINGS_MODEL_DIR: dir,
      }),
    ).rejects.toThrow(
      /EMBEDDINGS_MODEL_DIR cannot serve e5-small-v2: .*model\.onnx is not .*tokenizer\.json is missing/,
    );
    // The same files, from the cache, serve.
    const served = await startTestApp({
      ...JOBS_OFF,
      EMBEDDINGS_LOCAL_MODEL: 'e5-small-v2',
      EMBEDDINGS_MODEL_DIR: cacheFolder(defaultModelsDir(), E5),
    });
    try {
      expect((await ready(served)).embeddings).toEqual({ model: E5.modelId });
    } finally {
      await served.close();
    }
  });
});
