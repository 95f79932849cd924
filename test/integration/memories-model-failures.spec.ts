import { DataSource } from 'typeorm';
import { EmbeddingService } from '../../src/embeddings/embedding.service.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { MemoryClock } from '../../src/memories/memory-clock.js';
import { EXTRACT_JOB } from '../../src/memories/memory-extraction.service.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  createLegacy,
  exchange,
  rememberThis,
  rowsOf,
  setNow,
  signIn,
  startConversation,
  vectorCount,
} from './memories-fixtures.js';

/**
 * Extraction against a scripted OpenAI-compatible model: an outage or a broken answer never
 * loses the job or the memory, the threshold and the medical/financial cap apply to whatever
 * the model says, and past the per-user rate limit jobs wait instead of being dropped.
 */
describe('Memory extraction with a real model endpoint', () => {
  let fake: FakeOpenAiServer;
  let t: TestApp;
  let ds: DataSource;
  let jobs: JobsService;
  let clock: MemoryClock;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake',
      MODEL_MAX_RETRIES: '1',
      MODEL_RETRY_BASE_MS: '10',
      MODEL_TIMEOUT_MS: '2000',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      MEMORY_EXTRACTIONS_PER_MINUTE: '2',
    });
    ds = t.app.get(DataSource);
    jobs = t.app.get(JobsService);
    clock = t.app.get(MemoryClock);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  afterEach(() => {
    fake.reset();
    setNow(clock);
  });

  const jobOf = async (key: string) =>
    (
      await ds.query(
        `SELECT status, attempts, last_error AS "lastError",
                extract(epoch FROM run_at - now())::float8 AS "dueIn"
           FROM jobs WHERE type = $1 AND key = $2`,
        [EXTRACT_JOB, key],
      )
    )[0] as { status: string; attempts: number; lastError: string | null; dueIn: number };

  const completed = async (sourceMessageId: string) =>
    (
      await ds.query(
        `SELECT completed_at IS NOT NULL AS done FROM memory_extractions WHERE source_message_id = $1`,
        [sourceMessageId],
      )
    )[0]?.done ?? false;

  /** Makes deferred and retried jobs due now, and runs them. */
  const runDueNow = async () => {
    await ds.query(`UPDATE jobs SET run_at = now() WHERE type = $1 AND status = 'PENDING'`, [
      EXTRACT_JOB,
    ]);
    await jobs.drain({ horizonMs: 0 });
  };

  async function setup(
    sub: string,
  ): Promise<{ user: TestUser & { id: string }; conversationId: string }> {
    const user = await signIn(t, sub);
    const legacyId = await createLegacy(t, user);
    return { user, conversationId: await startConversation(t, user, legacyId, true) };
  }

  it('defers the job through a model outage without spending an attempt, then remembers', async () => {
    const { user, conversationId } = await setup('outage-user');
    fake.enqueue('chat', reply.error(503), reply.error(503));
    const ex = await exchange(t, user, conversationId, 'I live in Porto.');
    await jobs.drain({ horizonMs: 0 });
    const deferred = await jobOf(ex.userMessageId);
    expect(deferred).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(deferred.lastError).toMatch(/model unavailable/);
    expect(await rowsOf(ds, user.id)).toEqual([]);
    expect(await completed(ex.userMessageId)).toBe(false);

    // A Retry-After longer than the client may wait is honoured by the job.
    fake.enqueue('chat', reply.rateLimited('120'));
    await runDueNow();
    const limited = await jobOf(ex.userMessageId);
    expect(limited).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(limited.dueIn).toBeGreaterThan(110);

    await runDueNow();
    expect(await jobOf(ex.userMessageId)).toMatchObject({ status: 'SUCCEEDED' });
    expect((await rowsOf(ds, user.id)).map((r) => r.content)).toEqual(['I live in Porto.']);
    expect(await completed(ex.userMessageId)).toBe(true);
  });

  it('retries an answer refused every time like a failure, and stores nothing from it', async () => {
    const { user, conversationId } = await setup('invalid-user');
    const bad = reply.content('Sure! You told me you work as a nurse.');
    fake.enqueue('chat', bad, bad, bad);
    // The client asks again twice, differently; refused each time, the job's own retry takes over.
    const ex = await exchange(t, user, conversationId, 'I work as a nurse.');
    await jobs.drain({ horizonMs: 0 });
    const failed = await jobOf(ex.userMessageId);
    expect(failed).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(failed.lastError).toMatch(/invalid/);
    expect(await rowsOf(ds, user.id)).toEqual([]);

    await runDueNow();
    expect(await jobOf(ex.userMessageId)).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
    expect((await rowsOf(ds, user.id)).map((r) => r.content)).toEqual(['I work as a nurse.']);
  });

  it("applies the threshold and the medical cap to the model's answer, and merges its rewording", async () => {
    const { user, conversationId } = await setup('threshold-user');
    await exchange(t, user, conversationId, 'I live in Porto.');
    await jobs.drain();
    fake.enqueue(
      'chat',
      reply.object({
        memories: [
          { content: "The user's doctor changed their insulin.", type: 'FACT', confidence: 0.95 },
          { content: 'The user lives in Porto.', type: 'FACT', confidence: 0.9 },
          { content: 'The user has a sister named Rita.', type: 'RELATIONSHIP', confidence: 0.7 },
        ],
      }),
    );
    const ex = await exchange(
      t,
      user,
      conversationId,
      'My doctor changed my insulin. Porto is lovely in spring, and Rita visits.',
    );
    await jobs.drain();
    const rows = await rowsOf(ds, user.id);
    // Rita's being a sister is the model's guess, not what the user said: never proposed.
    expect(rows.map((r) => [r.content, r.reference_count])).toEqual([['I live in Porto.', 1]]);
    const [ledger] = await ds.query(
      `SELECT model, proposed_count, below_threshold_count, created_count, merged_count
         FROM memory_extractions WHERE source_message_id = $1`,
      [ex.userMessageId],
    );
    expect(ledger).toEqual({
      model: 'openai:fake',
      proposed_count: 2,
      below_threshold_count: 1,
      created_count: 0,
      merged_count: 1,
    });

    fake.enqueue(
      'chat',
      reply.object({
        memories: [
          { content: 'The user might enjoy opera.', type: 'PREFERENCE', confidence: 0.69 },
        ],
      }),
    );
    await exchange(t, user, conversationId, 'Opera, maybe?');
    await jobs.drain();
    expect(await rowsOf(ds, user.id)).toHaveLength(1);
  });

  it('defers extractions past the per-user rate limit and runs them later, never dropping one', async () => {
    const { user, conversationId } = await setup('busy-user');
    const now = new Date();
    setNow(clock, now);
    const turns = [
      await exchange(t, user, conversationId, 'I live in Leeds.'),
      await exchange(t, user, conversationId, 'I work as a pilot.'),
      await exchange(t, user, conversationId, 'My favourite colour is blue.'),
    ];
    await jobs.drain();
    const done = await Promise.all(turns.map((x) => completed(x.userMessageId)));
    expect(done.filter(Boolean)).toHaveLength(2);
    const waiting = turns[done.indexOf(false)];
    const job = await jobOf(waiting.userMessageId);
    expect(job).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(job.lastError).toMatch(/limit of 2 per minute/);
    expect(job.dueIn).toBeGreaterThan(50);
    expect(await rowsOf(ds, user.id)).toHaveLength(2);

    // Still inside the minute: it waits again.
    await runDueNow();
    expect(await completed(waiting.userMessageId)).toBe(false);

    setNow(clock, new Date(now.getTime() + 61_000));
    await runDueNow();
    expect(await completed(waiting.userMessageId)).toBe(true);
    expect(await rowsOf(ds, user.id)).toHaveLength(3);
    // Other users have their own allowance.
    const other = await setup('calm-user');
    const ex = await exchange(t, other.user, other.conversationId, 'I grew up in Cork.');
    await jobs.drain();
    expect(await completed(ex.userMessageId)).toBe(true);
  });
});

describe('Memories with the embedding model down', () => {
  let fake: FakeOpenAiServer;
  let t: TestApp;
  let ds: DataSource;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      EMBEDDINGS: 'openai',
      EMBEDDINGS_BASE_URL: fake.url,
      EMBEDDINGS_MODEL: 'fake-embed',
      EMBEDDINGS_DIMENSIONS: '32',
      MODEL_MAX_RETRIES: '0',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
    });
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('stores the memory without a vector, still merges exact restatements, and the sweeper embeds it later', async () => {
    const user = await signIn(t, 'embed-outage-user');
    fake.enqueue('embeddings', reply.error(503));
    const saved = await rememberThis(t, user, 'I keep bees in the orchard.');
    expect(saved.outcome).toBe('CREATED');
    expect(await vectorCount(ds, [saved.memory.id])).toBe(0);

    fake.enqueue('embeddings', reply.error(503));
    const again = await rememberThis(t, user, 'I keep bees in the orchard!');
    expect(again).toMatchObject({ outcome: 'MERGED', memory: { id: saved.memory.id } });

    expect(await t.app.get(EmbeddingService).sweep()).toBe(1);
    expect(await vectorCount(ds, [saved.memory.id])).toBe(1);
    expect((await rowsOf(ds, user.id)).map((r) => r.reference_count)).toEqual([1]);
  });
});
