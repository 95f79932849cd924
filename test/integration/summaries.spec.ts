import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import { MessageRole } from '../../src/conversations/message-role.enum.js';
import { FactWriterService } from '../../src/facts/fact-writer.service.js';
import { JobDeferred } from '../../src/jobs/jobs.exception.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { ScheduledTasksService } from '../../src/jobs/scheduled-tasks.service.js';
import {
  SET_ASIDE_JOB,
  SUMMARIZE_JOB,
  SummariesService,
} from '../../src/summaries/summaries.service.js';
import { SCHEMA_NAME } from '../../src/llm/prompts.js';
import {
  FakeOpenAiServer,
  FakeReply,
  FakeRequest,
  reply,
} from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * Rolling summarization against the scripted OpenAI-compatible server: thresholds and range
 * arithmetic, idempotency, malformed output and outages (nothing stored, the same range tried
 * again), the transaction spanning chunk and facts, follow-up jobs and the sweeper.
 */
describe('rolling summarization', () => {
  let fake: FakeOpenAiServer;
  let t: TestApp;
  let ds: DataSource;
  let jobs: JobsService;
  let summaries: SummariesService;
  let owner: TestUser;
  let legacyId: string;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake',
      EMBEDDINGS: 'openai',
      EMBEDDINGS_BASE_URL: fake.url,
      EMBEDDINGS_MODEL: 'fake-embed',
      EMBEDDINGS_DIMENSIONS: '64',
      MODEL_MAX_RETRIES: '0',
      MODEL_TIMEOUT_MS: '2000',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      JOBS_RETRY_BASE_MS: '10',
      SUMMARIZATION_BATCHES_PER_JOB: '2',
      SUMMARIZATION_RETRY_MS: '50',
      AGENT_REPLY: 'off',
    });
    ds = t.app.get(DataSource);
    jobs = t.app.get(JobsService);
    summaries = t.app.get(SummariesService);
    owner = await t.user('summaries-owner');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Joe" }) { id } }',
      {},
      owner,
    );
    legacyId = created.data!.createLegacy.id;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  afterEach(() => {
    fake.reset();
    jest.restoreAllMocks();
  });

  const isSummary = (r: FakeRequest) =>
    r.body.response_format?.json_schema?.name === SCHEMA_NAME.summarizeTurns;

  /** Replies for the next summarization calls; other tasks (memory extraction) get auto. */
  function scriptSummaries(...replies: FakeReply[]) {
    fake.setHandler('chat', (r) => (isSummary(r) && replies.shift()) || reply.auto());
  }

  /** A conversation of `count` turns, imported at once. */
  async function imported(count: number, say = (i: number) => `Turn ${i}: Joe loved fishing.`) {
    const res = await t.gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($input: ImportConversationInput!) {
         importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId,
          messages: Array.from({ length: count }, (_, i) => ({
            role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
            content: say(i),
            occurredAt: new Date(Date.UTC(2020, 0, 1, 0, i)).toISOString(),
          })),
        },
      },
      owner,
    );
    return res.data!.importConversation.conversation.id;
  }

  const ranges = async (conversationId: string) =>
    (
      await ds.query(
        `SELECT range_start AS s, range_end AS e FROM conversation_chunks
          WHERE conversation_id = $1 ORDER BY range_start`,
        [conversationId],
      )
    ).map((r: { s: number; e: number }) => [r.s, r.e]);

  const counts = async (conversationId: string) => {
    const [row] = await ds.query(
      `SELECT (SELECT count(*) FROM conversation_chunks WHERE conversation_id = $1)::int AS chunks,
              (SELECT count(*) FROM facts WHERE source_conversation_id = $1)::int AS facts,
              (SELECT coalesce(sum(mention_count), 0) FROM facts WHERE legacy_id = $2)::int AS mentions,
              (SELECT count(*) FROM fact_sources s JOIN conversation_chunks k ON k.id = s.chunk_id
                WHERE k.conversation_id = $1)::int AS sources,
              (SELECT count(*) FROM embeddings e JOIN conversation_chunks k ON k.id = e.item_id
                WHERE e.kind = 'summary' AND k.conversation_id = $1)::int AS vectors`,
      [conversationId, legacyId],
    );
    return row as {
      chunks: number;
      facts: number;
      mentions: number;
      sources: number;
      vectors: number;
    };
  };

  it('summarizes the oldest batch once more than the threshold is unsummarized', async () => {
    const id = await imported(30);
    await jobs.drain();
    // 30 unsummarized turns is not more than 30.
    expect(await ranges(id)).toEqual([]);

    const conversations = t.app.get(ConversationsService);
    const conversation = (await conversations.findByIds([id]))[0];
    await conversations.append(conversation, {
      role: MessageRole.USER,
      authorId: conversation.userId,
      content: 'Joe loved golf.',
    });
    await jobs.drain();
    expect(await ranges(id)).toEqual([[0, 19]]);

    // 11 left; 20 more make 31 and the next 20 are summarized, starting where the last ended.
    for (let i = 0; i < 20; i++) {
      await conversations.append(conversation, {
        role: i % 2 ? MessageRole.USER : MessageRole.ASSISTANT,
        authorId: conversation.userId,
        content: `More about Joe, part ${i}.`,
      });
    }
    await jobs.drain();
    expect(await ranges(id)).toEqual([
      [0, 19],
      [20, 39],
    ]);

    const q = await t.gql<{
      conversation: {
        unsummarizedTurns: number;
        chunks: {
          rangeStart: number;
          rangeEnd: number;
          turnCount: number;
          content: string;
          model: string;
          structured: { facts: string[] };
        }[];
      };
    }>(
      `query($id: ID!) { conversation(id: $id) { unsummarizedTurns chunks {
         rangeStart rangeEnd turnCount content model structured { facts entities } } } }`,
      { id },
      owner,
    );
    expect(q.errors).toBeUndefined();
    expect(q.data!.conversation.unsummarizedTurns).toBe(11);
    expect(q.data!.conversation.chunks.map((c) => [c.rangeStart, c.rangeEnd, c.turnCount])).toEqual(
      [
        [0, 19, 20],
        [20, 39, 20],
      ],
    );
    expect(q.data!.conversation.chunks[0].model).toBe('openai:fake');
    expect(q.data!.conversation.chunks[0].content.length).toBeGreaterThan(0);
    // One model call per chunk, each given exactly its range.
    const calls = fake.requestsFor('chat').filter(isSummary);
    expect(calls).toHaveLength(2);
    expect(calls[0].body.messages![1].content).toContain('[turn 0] USER');
    expect(calls[0].body.messages![1].content).toContain('[turn 19] ASSISTANT');
    expect(calls[0].body.messages![1].content).not.toContain('[turn 20]');
    expect(calls[1].body.messages![1].content).toContain('[turn 20] USER');
    const c = await counts(id);
    expect(c.vectors).toBe(2);
  });

  it('works through an import in follow-up jobs and stops at the threshold', async () => {
    const id = await imported(130);
    // One job per run writes at most SUMMARIZATION_BATCHES_PER_JOB (2) chunks, then hands over.
    const [job] = await ds.query(`SELECT payload FROM jobs WHERE type = $1 AND key = $2`, [
      SUMMARIZE_JOB,
      id,
    ]);
    expect(job.payload).toEqual({ conversationId: id });
    await jobs.drain();
    expect(await ranges(id)).toEqual([
      [0, 19],
      [20, 39],
      [40, 59],
      [60, 79],
      [80, 99],
    ]);
    const runs = await ds.query(`SELECT status FROM jobs WHERE type = $1 AND key = $2`, [
      SUMMARIZE_JOB,
      id,
    ]);
    expect(runs.map((r: { status: string }) => r.status)).toEqual([
      'SUCCEEDED',
      'SUCCEEDED',
      'SUCCEEDED',
    ]);
  });

  it('changes nothing when the job runs twice or two runs race', async () => {
    const id = await imported(45, (i) => `Joe was a carpenter who built boats, said in turn ${i}.`);
    await Promise.all([summaries.summarizeNext(id, false), summaries.summarizeNext(id, false)]);
    expect(await ranges(id)).toEqual([[0, 19]]);
    const before = await counts(id);
    expect(before.chunks).toBe(1);
    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id });
    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id });
    expect(await ranges(id)).toEqual([[0, 19]]);
    expect(await counts(id)).toEqual(before);
  });

  it('asks again differently, tries a shorter span, then sets the range aside and goes on', async () => {
    const id = await imported(45, (i) => `Joe was a carpenter who built boats, said in turn ${i}.`);
    // The model cannot summarize anything that holds turn 0; the rest it can.
    let refuse = true;
    const holdsTurn0 = (r: FakeRequest) =>
      /\[turn 0\] /.test(String(r.body.messages?.at(-1)?.content ?? ''));
    fake.setHandler('chat', (r) =>
      isSummary(r) && refuse && holdsTurn0(r)
        ? reply.content('Here is your summary: the user talked about Joe.')
        : reply.auto(),
    );
    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id });

    const asked = fake.requestsFor('chat').filter(isSummary);
    const user = (r: FakeRequest) => String(r.body.messages?.at(-1)?.content ?? '');
    // Turns 0-19 three times (each retry with another temperature and seed, and what was
    // wrong), turns 0-9 three times, then 10-29 once.
    expect(asked.map((r) => /\[turn 19\] /.test(user(r)))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      true,
    ]);
    expect(asked.slice(0, 3).map((r) => (r.body as { temperature?: number }).temperature)).toEqual([
      undefined,
      0.5,
      0.9,
    ]);
    expect(user(asked[1])).toMatch(/previous answer was refused: the answer is not JSON/);
    expect(user(asked[3])).toMatch(/\[turn 9\] /);
    expect(user(asked[3])).not.toMatch(/\[turn 10\] /);

    // 0-9 is set aside, visibly; the conversation went on after it.
    expect(await ranges(id)).toEqual([[10, 29]]);
    expect(await summaries.setAsides(id)).toEqual([
      expect.objectContaining({ conversationId: id, rangeStart: 0, rangeEnd: 9 }),
    ]);
    const admin = await t.user('summaries-operator', { admin: true });
    const listed = await t.gql<{
      failedJobs: { nodes: { id: string; type: string; lastError: string; payload: unknown }[] };
    }>('{ failedJobs(first: 50) { nodes { id type lastError payload } } }', {}, admin);
    const failed = listed.data!.failedJobs.nodes.find(
      (n) => n.type === SET_ASIDE_JOB && JSON.stringify(n.payload).includes(id),
    )!;
    expect(failed.lastError).toMatch(/^turns 0-9 set aside: .*summarizeTurns output is invalid/);
    expect(failed.payload).toEqual({ conversationId: id, rangeStart: 0, rangeEnd: 9 });
    // A sweep does not bring the set-aside range back.
    expect(await summaries.pendingTurns([id])).toEqual(new Map([[id, 15]]));

    // The operator retries it once the model can: the range takes its place.
    refuse = false;
    const retried = await t.gql(
      `mutation($id: ID!) { retryJob(id: $id) { status } }`,
      { id: failed.id },
      admin,
    );
    expect(retried.errors).toBeUndefined();
    await jobs.drain();
    expect(await ranges(id)).toEqual([
      [0, 9],
      [10, 29],
    ]);
    expect(await summaries.setAsides(id)).toEqual([]);
    // Run twice, the job changes nothing.
    await jobs.runHandler(SET_ASIDE_JOB, { conversationId: id, rangeStart: 0, rangeEnd: 9 });
    expect(await ranges(id)).toEqual([
      [0, 9],
      [10, 29],
    ]);
  });

  it('keeps the answer a repair request gets, after a refused one', async () => {
    const id = await imported(31);
    scriptSummaries(reply.content('{"summary": '));
    await summaries.enqueue(id);
    await jobs.drain();
    expect(await ranges(id)).toEqual([[0, 19]]);
    const asked = fake.requestsFor('chat').filter(isSummary);
    expect(asked).toHaveLength(2);
    expect(String(asked[1].body.messages?.at(-1)?.content)).toMatch(/previous answer was refused/);
    const [run] = await ds.query(
      `SELECT status, attempts FROM jobs WHERE type = $1 AND key = $2 ORDER BY created_at DESC LIMIT 1`,
      [SUMMARIZE_JOB, id],
    );
    expect(run).toEqual({ status: 'SUCCEEDED', attempts: 1 });
  });

  it("keeps only facts the member said: one citing only the agent's turns is dropped", async () => {
    const id = await imported(31, (i) =>
      i === 2
        ? 'Joe played the banjo at church every Sunday.'
        : i % 2 === 1
          ? 'And Joe kept bees behind the barn, I suppose.'
          : `Turn ${i}: Joe loved fishing.`,
    );
    const fact = (content: string, sourceTurnIndexes: number[]) => ({
      content,
      category: 'HOBBY',
      confidence: 0.9,
      sourceTurnIndexes,
    });
    fake.enqueue(
      'chat',
      reply.object({
        summary: 'They talked about Joe, his banjo at church and his bees behind the barn.',
        structured: { facts: [], preferences: [], decisions: [], todos: [], entities: [] },
        facts: [
          fact('Joe kept bees behind the barn.', [1, 3]),
          fact('Joe played the banjo at church.', [2, 3]),
        ],
      }),
    );
    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id });
    const rows = await ds.query(
      `SELECT content, source_range_start AS s, source_range_end AS e FROM facts
        WHERE source_conversation_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ content: 'Joe played the banjo at church.', s: 2, e: 3 }]);
  });

  it('waits out model and embedding outages without losing or skipping turns', async () => {
    const id = await imported(31);
    fake.enqueue('chat', reply.error(503));
    await expect(jobs.runHandler(SUMMARIZE_JOB, { conversationId: id })).rejects.toBeInstanceOf(
      JobDeferred,
    );
    fake.enqueue('chat', reply.rateLimited('0'));
    await expect(jobs.runHandler(SUMMARIZE_JOB, { conversationId: id })).rejects.toBeInstanceOf(
      JobDeferred,
    );
    // The model answers, but the summary cannot be embedded: still nothing stored.
    fake.enqueue('embeddings', reply.error(500));
    await expect(jobs.runHandler(SUMMARIZE_JOB, { conversationId: id })).rejects.toBeInstanceOf(
      JobDeferred,
    );
    expect(await counts(id)).toMatchObject({ chunks: 0, facts: 0, vectors: 0 });

    // Queued: deferred without spending attempts, then done once the models are back.
    scriptSummaries(reply.error(500), reply.error(502));
    await summaries.enqueue(id);
    await jobs.drain();
    expect(await ranges(id)).toEqual([[0, 19]]);
    expect(await counts(id)).toMatchObject({ chunks: 1, vectors: 1 });
    const [run] = await ds.query(
      `SELECT status, attempts FROM jobs WHERE type = $1 AND key = $2 ORDER BY created_at DESC LIMIT 1`,
      [SUMMARIZE_JOB, id],
    );
    expect(run).toEqual({ status: 'SUCCEEDED', attempts: 1 });
  });

  it('writes the chunk and its facts together or not at all', async () => {
    const id = await imported(31, (i) =>
      i % 2 === 0 ? `Joe was born in Dayton in 19${10 + i}.` : 'That is lovely.',
    );
    const facts = t.app.get(FactWriterService);
    jest.spyOn(facts, 'applyExtracted').mockRejectedValueOnce(new Error('disk full'));
    await expect(jobs.runHandler(SUMMARIZE_JOB, { conversationId: id })).rejects.toThrow(
      'disk full',
    );
    expect(await counts(id)).toMatchObject({ chunks: 0, facts: 0, sources: 0, vectors: 0 });

    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id });
    const after = await counts(id);
    expect(after.chunks).toBe(1);
    expect(after.facts).toBeGreaterThan(0);
    expect(after.sources).toBeGreaterThanOrEqual(after.facts);
  });

  it('lets the owner summarize now, below the threshold, and defers when the model fails', async () => {
    const id = await imported(7);
    const NOW = `mutation($id: ID!) { summarizeNow(conversationId: $id) {
      unsummarizedTurns deferred chunks { rangeStart rangeEnd }
      conversation { id unsummarizedTurns chunks { rangeStart rangeEnd } } } }`;
    scriptSummaries(reply.error(503));
    const failed = await t.gql<{ summarizeNow: Record<string, unknown> }>(NOW, { id }, owner);
    expect(failed.data!.summarizeNow).toEqual({
      unsummarizedTurns: 7,
      deferred: true,
      chunks: [],
      conversation: { id, unsummarizedTurns: 7, chunks: [] },
    });
    // The pass continues in the background once the model is back, charged to the one who
    // asked, as the inline batches were.
    const [{ ownerId }] = await ds.query(
      `SELECT user_id AS "ownerId" FROM conversations WHERE id = $1`,
      [id],
    );
    const [waiting] = await ds.query(
      `SELECT payload FROM jobs WHERE type = $1 AND key = $2 AND status = 'PENDING'`,
      [SUMMARIZE_JOB, `${id}:now:${ownerId}`],
    );
    expect(waiting.payload).toEqual({ conversationId: id, force: true, chargedTo: ownerId });
    await jobs.drain({ horizonMs: 60_000 });
    expect(await ranges(id)).toEqual([[0, 6]]);

    const again = await t.gql<{ summarizeNow: Record<string, unknown> }>(NOW, { id }, owner);
    expect(again.data!.summarizeNow).toMatchObject({
      unsummarizedTurns: 0,
      deferred: false,
      chunks: [],
    });
  });

  it('sweeps up conversations over the threshold that no job is handling', async () => {
    const id = await imported(50);
    // As after downtime with the check lost: no job waits for this conversation.
    await ds.query(`DELETE FROM jobs WHERE type = $1 AND key = $2`, [SUMMARIZE_JOB, id]);
    await jobs.drain();
    expect(await ranges(id)).toEqual([]);

    const tasks = t.app.get(ScheduledTasksService);
    expect(tasks.names()).toContain('summaries-sweep');
    expect(await tasks.tick({ name: 'summaries-sweep' })).toBe(true);
    await jobs.drain();
    expect(await ranges(id)).toEqual([[0, 19]]);
    // Nothing over the threshold any more: the next sweep enqueues nothing for it.
    await summaries.sweep();
    const pending = await ds.query(
      `SELECT 1 FROM jobs WHERE type = $1 AND key = $2 AND status = 'PENDING'`,
      [SUMMARIZE_JOB, id],
    );
    expect(pending).toEqual([]);
  });
});
