import { DataSource } from 'typeorm';
import { BackfillProgress, BackfillRunner } from '../../src/backfill/backfill.runner.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { MemoryExtractionService } from '../../src/memories/memory-extraction.service.js';
import { STORY_INDEX_JOB } from '../../src/stories/story-jobs.js';
import { StoryFactsService } from '../../src/stories/story-facts.service.js';
import { SCHEMA_NAME } from '../../src/llm/prompts.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * The backfill (`npm run backfill`): facts from stories' unread passages, memories from
 * exchanges that extraction never completed; a dry run changes nothing, a second run finds
 * nothing, imports only when asked.
 */
describe('backfill', () => {
  let t: TestApp;
  let ds: DataSource;
  let runner: BackfillRunner;
  let user: TestUser;
  let legacyId: string;
  const notes: string[] = [];
  const totals: Record<string, number> = {};
  const advanced: Record<string, number> = {};
  const progress: BackfillProgress = {
    total: (what, n) => (totals[what] = n),
    advance: (what, n) => (advanced[what] = (advanced[what] ?? 0) + n),
    note: (message) => notes.push(message),
  };
  const options = {
    facts: true,
    memories: true,
    dryRun: false,
    includeImports: false,
    shareLikeStory: false,
  };

  const ok = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const res = await t.gql<T>(query, variables, user);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const state = () =>
    ds.query(
      `SELECT (SELECT json_agg(f ORDER BY f.id) FROM (SELECT id, mention_count, updated_at FROM facts) f) AS facts,
              (SELECT json_agg(m ORDER BY m.id) FROM (SELECT id, reference_count, updated_at FROM memories) m) AS memories,
              (SELECT count(*)::int FROM memory_extractions WHERE completed_at IS NOT NULL) AS extractions`,
    );

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    runner = new BackfillRunner(t.app.get(StoryFactsService), t.app.get(MemoryExtractionService));
    user = await t.user('backfill-user');
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Rose" }) { id } }',
      )
    ).createLegacy.id;
    const { addStory } = await ok<{ addStory: { id: string } }>(
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "Her life",
         content: "Rose was born in Cork in 1931. Rose worked as a lighthouse keeper for thirty years." }) { id } }`,
      { l: legacyId },
    );
    // A live conversation, answered by a client's own model: extraction was queued, never run.
    const { startConversation } = await ok<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l, remember: true }) { id } }',
      { l: legacyId },
    );
    for (const [said, answer] of [
      ['My sister Anna lives in Lisbon.', 'How often do you visit her?'],
      ['I love gardening on Sunday mornings.', 'What do you grow?'],
    ]) {
      await ok(
        'mutation($c: ID!, $s: String!) { sendMessage(input: { conversationId: $c, content: $s }) { message { id } } }',
        { c: startConversation.id, s: said },
      );
      await ok(
        'mutation($c: ID!, $s: String!) { recordAssistantMessage(input: { conversationId: $c, content: $s }) { id } }',
        { c: startConversation.id, s: answer },
      );
    }
    // An imported one: left out unless asked for.
    await ok(
      `mutation($l: ID!) { importConversation(input: { legacyId: $l, messages: [
         { role: USER, content: "My brother Tom lives in Boston.", occurredAt: "2024-01-01T10:00:00Z" },
         { role: ASSISTANT, content: "Do you see him often?", occurredAt: "2024-01-01T10:01:00Z" }
       ] }) { conversation { id } } }`,
      { l: legacyId },
    );
    await ds.query(`UPDATE conversation_participants SET remember = true`);
    // The story is indexed; nothing else has run.
    await t.app.get(JobsService).runHandler(STORY_INDEX_JOB, { storyId: addStory.id });
  });
  afterAll(() => t?.close());

  it('counts what it would do on a dry run, and changes nothing', async () => {
    const before = await state();
    const summary = await runner.run({ legacyId }, { ...options, dryRun: true }, progress);
    expect(summary.storyPassages.pending).toBeGreaterThan(0);
    expect(summary.exchanges.pending).toBe(2);
    expect(await state()).toEqual(before);
  });

  it('reads the facts and extracts the memories, reporting progress', async () => {
    const summary = await runner.run({ legacyId }, options, progress);
    expect(summary.storyPassages.read).toBe(summary.storyPassages.pending);
    expect(summary.storyPassages.factsFound).toBeGreaterThanOrEqual(2);
    expect(summary.exchanges).toMatchObject({ pending: 2, extracted: 2, skipped: 0 });
    expect(advanced.memories).toBe(2);
    const facts = await ds.query<{ content: string; kind: string }[]>(
      `SELECT f.content, s.kind FROM facts f JOIN fact_sources s ON s.fact_id = f.id WHERE f.legacy_id = $1`,
      [legacyId],
    );
    expect(facts).toEqual(
      expect.arrayContaining([{ content: 'Rose was born in Cork in 1931.', kind: 'STORY' }]),
    );
    const memories = await ds.query<{ content: string }[]>(`SELECT content FROM memories`);
    expect(memories.map((m) => m.content).join(' ')).toMatch(/Anna|Lisbon/);
    expect(memories.map((m) => m.content).join(' ')).not.toMatch(/Tom|Boston/);
  });

  it('finds nothing to do the second time', async () => {
    const before = await state();
    const summary = await runner.run({ legacyId }, options, progress);
    expect(summary.storyPassages.pending).toBe(0);
    expect(summary.exchanges.pending).toBe(0);
    expect(await state()).toEqual(before);
  });

  it('takes imported conversations when asked', async () => {
    const summary = await runner.run({ legacyId }, { ...options, includeImports: true }, progress);
    expect(summary.exchanges).toMatchObject({ pending: 1, extracted: 1 });
    const memories = await ds.query<{ content: string }[]>(`SELECT content FROM memories`);
    expect(memories.map((m) => m.content).join(' ')).toMatch(/Tom|Boston/);
  });
});

/**
 * A model that cannot extract one exchange: the backfill goes past it, reports it, and a later
 * run tries it again (it used to stop there, and every run after started at the same exchange).
 */
describe('backfill past an exchange the model cannot do', () => {
  let fake: FakeOpenAiServer;
  let t: TestApp;
  let runner: BackfillRunner;
  let legacyId: string;
  const notes: string[] = [];
  const progress: BackfillProgress = {
    total: () => undefined,
    advance: () => undefined,
    note: (message) => notes.push(message),
  };
  const options = {
    facts: false,
    memories: true,
    dryRun: false,
    includeImports: false,
    shareLikeStory: false,
  };

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    // Extraction of the exchange that mentions the harbour always gets an answer it refuses.
    fake.setHandler('chat', (r) =>
      r.body.response_format?.json_schema?.name === SCHEMA_NAME.extractMemories &&
      /harbour/.test(String(r.body.messages?.at(-1)?.content ?? ''))
        ? reply.object({ memories: [{ content: 'x', type: 'MOOD', confidence: 3 }] })
        : reply.auto(),
    );
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake',
      MODEL_MAX_RETRIES: '0',
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
    });
    runner = new BackfillRunner(t.app.get(StoryFactsService), t.app.get(MemoryExtractionService));
    const user = await t.user('backfill-past');
    const ok = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const res = await t.gql<T>(query, variables, user);
      expect(res.errors).toBeUndefined();
      return res.data!;
    };
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Rose" }) { id } }',
      )
    ).createLegacy.id;
    const { startConversation } = await ok<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l, remember: true }) { id } }',
      { l: legacyId },
    );
    for (const [said, answer] of [
      ['I grew up by the harbour in Cobh.', 'What was it like?'],
      ['My brother Tom lives in Boston.', 'Do you see him often?'],
    ]) {
      await ok(
        'mutation($c: ID!, $s: String!) { sendMessage(input: { conversationId: $c, content: $s }) { message { id } } }',
        { c: startConversation.id, s: said },
      );
      await ok(
        'mutation($c: ID!, $s: String!) { recordAssistantMessage(input: { conversationId: $c, content: $s }) { id } }',
        { c: startConversation.id, s: answer },
      );
    }
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('goes past it, reports it, and tries it again on the next run', async () => {
    const first = await runner.run({ legacyId }, options, progress);
    expect(first.exchanges).toMatchObject({ pending: 2, extracted: 1, failed: 1 });
    expect(first.failures).toEqual([
      { kind: 'exchange', id: expect.any(String), error: expect.stringMatching(/invalid/) },
    ]);
    expect(notes.join('\n')).toMatch(/failed and was gone past/);
    const memories = await t.app
      .get(DataSource)
      .query<{ content: string }[]>(`SELECT content FROM memories`);
    expect(memories.map((m) => m.content).join(' ')).toMatch(/Tom/);
    expect(memories.map((m) => m.content).join(' ')).not.toMatch(/harbour|Cobh/);

    // The next run finds only the exchange that failed, tries it, and reports it again.
    const second = await runner.run({ legacyId }, options, progress);
    expect(second.exchanges).toMatchObject({ pending: 1, extracted: 0, failed: 1 });
    expect(second.failures[0].id).toBe(first.failures[0].id);
  });
});
