import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { INDEX_JOB } from '../../src/search/segment-indexer.service.js';
import { inMemoryHoldout } from '../../src/signals/memory-holdout.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * Signals for operators, end to end: the memory A/B holdout (the block withheld from the model,
 * the arm recorded), "forgot" complaints, the upgrade triggers of memoryMetricsReport, the
 * memoryUplift comparison and the Prometheus /metrics endpoint.
 */
const METRICS_TOKEN = 'scrape-token-0123456789';
const MEMORY_TITLE = 'What you remember about the person you are talking with';
const SEND = `mutation($input: SendMessageInput!) {
  sendMessage(input: $input) { message { id } reply { id content } }
}`;
const REPORT = `query($from: DateTime!, $to: DateTime!) {
  memoryMetricsReport(from: $from, to: $to) {
    assemblies complaints holdoutShare fewFullTextShare summariesOnlyShare
    denseP95Ms lexicalP95Ms trigramP95Ms fusionP95Ms meanTopSimilarity
    summaryTokens modelTokens summarySpendShare
    triggers { name value threshold fires enoughData variable description suggestion }
  }
}`;
const UPLIFT = `query($from: DateTime!, $to: DateTime!) {
  memoryUplift(from: $from, to: $to) {
    holdoutShare confidence
    withMemory { conversations replies repliesReferencingMemory referencedMemoryShare forgotComplaints forgotPer100Turns meanConversationTurns }
    holdout { conversations replies repliesReferencingMemory referencedMemoryShare forgotComplaints forgotPer100Turns meanConversationTurns }
    referencedMemory { difference low high significant method }
    forgotPer100Turns { difference low high significant method }
    conversationLength { difference low high significant method }
  }
}`;

interface Trigger {
  name: string;
  value: number;
  threshold: number;
  fires: boolean;
  enoughData: boolean;
  variable: string;
}

describe('Signals for operators', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let db: DataSource;
  let owner: TestUser;
  let admin: TestUser;
  let legacyId: string;
  /** Conversations of the owner in each arm. */
  const arms = { memory: [] as string[], holdout: [] as string[] };
  const from = new Date(Date.now() - 60_000).toISOString();
  const to = () => new Date(Date.now() + 60_000).toISOString();
  const metricsUrl = () => t.url.replace(/\/graphql$/, '/metrics');

  async function ok<T>(query: string, variables: Record<string, unknown>, as: TestUser) {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  async function send(conversationId: string, content: string) {
    return ok<{ sendMessage: { message: { id: string }; reply: { id: string; content: string } } }>(
      SEND,
      { input: { conversationId, content } },
      owner,
    );
  }

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      MODEL_MAX_RETRIES: '0',
      MODEL_TIMEOUT_MS: '5000',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      MEMORY_AB_HOLDOUT: '0.5',
      TRIGGER_MIN_ASSEMBLIES: '1',
      METRICS_ENABLED: 'true',
      METRICS_TOKEN,
      METRICS_DB_REFRESH_MS: '0',
    });
    db = t.app.get(DataSource);
    // Every reply draws on the memory: the arms differ only in whether the model was given it.
    fake.setHandler('chat', () => reply.stream(['Earl Grey ', 'tea every morning, then.']));
    owner = await t.user('signals-owner', { email: 'signals-owner@example.com' });
    admin = await t.user('signals-admin', { email: 'signals-admin@example.com', admin: true });
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandma Rose" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    await ok(
      'mutation($i: RememberThisInput!) { rememberThis(input: $i) { memory { id } } }',
      { i: { content: 'I drink Earl Grey tea every morning.', legacyId } },
      owner,
    );
    // Conversations until each arm has two (the assignment is a hash of the id).
    while (arms.memory.length < 2 || arms.holdout.length < 2) {
      const { startConversation } = await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        owner,
      );
      const arm = inMemoryHoldout(startConversation.id, 0.5) ? arms.holdout : arms.memory;
      if (arm.length < 2) arm.push(startConversation.id);
    }
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('withholds the memory block in held-out conversations and records the arm', async () => {
    fake.reset();
    fake.setHandler('chat', () => reply.stream(['Earl Grey ', 'tea every morning, then.']));
    const inMemory = await send(arms.memory[0], 'What tea do I drink in the morning?');
    const heldOut = await send(arms.holdout[0], 'What tea do I drink in the morning?');
    const [withBlock, withoutBlock] = fake
      .requestsFor('chat')
      .map((r) => String(r.body.messages![0].content));
    expect(withBlock).toContain(MEMORY_TITLE);
    expect(withBlock).toContain('Earl Grey');
    expect(withoutBlock).not.toContain(MEMORY_TITLE);
    expect(withoutBlock).not.toContain('Earl Grey');

    const replies = await db.query<Record<string, unknown>[]>(
      `SELECT message_id, memory_holdout, memories_offered, memory_referenced, forgot_complaint
         FROM assistant_replies WHERE message_id = ANY($1::uuid[]) ORDER BY memory_holdout`,
      [[inMemory.sendMessage.reply.id, heldOut.sendMessage.reply.id]],
    );
    // Measured alike: held out, against the memory the block would have held.
    expect(replies).toEqual([
      expect.objectContaining({
        memory_holdout: false,
        memories_offered: 1,
        memory_referenced: true,
        forgot_complaint: false,
      }),
      expect.objectContaining({
        memory_holdout: true,
        memories_offered: 1,
        memory_referenced: true,
        forgot_complaint: false,
      }),
    ]);
    const metrics = await db.query<Record<string, unknown>[]>(
      `SELECT conversation_id, memory_holdout, dense_ms, lexical_ms, fusion_ms, top_similarities
         FROM retrieval_metrics WHERE conversation_id = ANY($1::uuid[]) AND operation = 'REPLY'`,
      [[arms.memory[0], arms.holdout[0]]],
    );
    expect(metrics).toHaveLength(2);
    for (const row of metrics) {
      expect(row.memory_holdout).toBe(row.conversation_id === arms.holdout[0]);
      expect(Number(row.fusion_ms)).toBeGreaterThan(0);
      expect(Number(row.lexical_ms)).toBeGreaterThan(0);
    }
  });

  it('retrievalDebug shows the owner the memory withheld by the holdout, and why', async () => {
    const debug = `query($c: ID!, $q: String!) {
      retrievalDebug(conversationId: $c, query: $q) { candidates { sourceType kept reason } }
    }`;
    const q = 'What tea do I drink in the morning?';
    const held = await ok<{ retrievalDebug: { candidates: Record<string, unknown>[] } }>(
      debug,
      { c: arms.holdout[0], q },
      owner,
    );
    expect(held.retrievalDebug.candidates).toContainEqual({
      sourceType: 'MEMORY',
      kept: false,
      reason: 'memory A/B holdout',
    });
    const given = await ok<{ retrievalDebug: { candidates: Record<string, unknown>[] } }>(
      debug,
      { c: arms.memory[0], q },
      owner,
    );
    expect(given.retrievalDebug.candidates).toContainEqual({
      sourceType: 'MEMORY',
      kept: true,
      reason: 'kept in memories',
    });
  });

  it('counts "forgot" complaints in English and Chinese on the metrics and reply rows', async () => {
    // The turns so far indexed, so that these searches find them (their similarities recorded).
    await t.app.get(JobsService).drain({ types: [INDEX_JOB], timeoutMs: 60_000 });
    const english = await send(arms.memory[1], 'You forgot! I already told you about the tea.');
    const chinese = await send(arms.holdout[1], '我说过我每天早上喝伯爵茶。');
    const rows = await db.query<{ forgot_complaint: boolean }[]>(
      `SELECT forgot_complaint FROM assistant_replies WHERE message_id = ANY($1::uuid[])`,
      [[english.sendMessage.reply.id, chinese.sendMessage.reply.id]],
    );
    expect(rows.map((r) => r.forgot_complaint)).toEqual([true, true]);
    const [{ n }] = await db.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM retrieval_metrics WHERE forgot_complaint`,
    );
    expect(Number(n)).toBe(2);
    const [row] = await db.query<{ top_similarities: number[]; hits_dense: number }[]>(
      `SELECT top_similarities, hits_dense FROM retrieval_metrics WHERE conversation_id = $1`,
      [arms.memory[1]],
    );
    expect(row.hits_dense).toBeGreaterThan(0);
    expect(row.top_similarities.length).toBeGreaterThan(0);
    expect([...row.top_similarities].sort((a, b) => b - a)).toEqual(row.top_similarities);
  });

  it('memoryMetricsReport evaluates every upgrade trigger with its threshold', async () => {
    const { memoryMetricsReport: r } = await ok<{
      memoryMetricsReport: Record<string, number> & { triggers: Trigger[] };
    }>(REPORT, { from, to: to() }, admin);
    expect(r.assemblies).toBe(4);
    expect(r.complaints).toBe(2);
    expect(r.holdoutShare).toBe(0.5);
    expect(r.meanTopSimilarity).toBeGreaterThan(0);
    // Every reply was a model call; none summarized.
    expect(r.modelTokens).toBeGreaterThan(0);
    expect(r.summaryTokens).toBe(0);
    const byName = Object.fromEntries(r.triggers.map((x) => [x.name, x]));
    expect(Object.keys(byName)).toEqual([
      'FEW_FULL_TEXT_HITS',
      'FALLBACK',
      'SUMMARIES_ONLY',
      'TRUNCATION',
      'P95_LATENCY',
      'SUMMARY_SPEND',
      'FORGOT_COMPLAINTS',
    ]);
    expect(byName.FORGOT_COMPLAINTS).toMatchObject({
      value: 2,
      threshold: 3,
      fires: false,
      variable: 'TRIGGER_FORGOT_PER_WEEK',
    });
    expect(byName.P95_LATENCY).toMatchObject({ threshold: 3000, enoughData: true });
    expect(byName.SUMMARY_SPEND).toMatchObject({ value: 0, fires: false, enoughData: true });
    expect(byName.FEW_FULL_TEXT_HITS).toMatchObject({
      value: r.fewFullTextShare,
      threshold: 0.3,
      fires: r.fewFullTextShare > 0.3,
    });
  });

  it('memoryUplift compares the two arms with counts and intervals', async () => {
    const { memoryUplift: u } = await ok<{
      memoryUplift: {
        holdoutShare: number;
        confidence: number;
        withMemory: Record<string, number>;
        holdout: Record<string, number>;
        referencedMemory: Record<string, unknown>;
        forgotPer100Turns: Record<string, unknown>;
        conversationLength: Record<string, unknown>;
      };
    }>(UPLIFT, { from, to: to() }, admin);
    expect(u.holdoutShare).toBe(0.5);
    expect(u.confidence).toBe(0.95);
    for (const arm of [u.withMemory, u.holdout]) {
      expect(arm).toMatchObject({
        conversations: 2,
        replies: 2,
        repliesReferencingMemory: 2,
        referencedMemoryShare: 1,
        forgotComplaints: 1,
        forgotPer100Turns: 50,
        meanConversationTurns: 2,
      });
    }
    expect(u.referencedMemory).toMatchObject({ difference: 0, significant: false });
    expect((u.referencedMemory.low as number) < 0).toBe(true);
    expect((u.referencedMemory.high as number) > 0).toBe(true);
    expect(u.forgotPer100Turns).toMatchObject({ difference: 0, significant: false });
    // Every conversation has two turns: no variance, a zero-width interval.
    expect(u.conversationLength).toMatchObject({ difference: 0, low: 0, high: 0 });
  });

  it('refuses a period that ends before it starts', async () => {
    const res = await t.gql(UPLIFT, { from: to(), to: from }, admin);
    expect(res.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'to' });
  });

  it('/metrics needs the token, and speaks the Prometheus text format', async () => {
    expect((await fetch(metricsUrl())).status).toBe(401);
    expect(
      (await fetch(metricsUrl(), { headers: { authorization: 'Bearer wrong-token-0123456789' } }))
        .status,
    ).toBe(401);
    const client = t.ws(owner);
    const events = subscribe(
      client,
      'subscription($id: ID!) { messageAdded(conversationId: $id) { id } }',
      { id: arms.memory[0] },
    );
    await events.ready;
    const scrape = async () => {
      const res = await fetch(metricsUrl(), {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      return res.text();
    };
    const text = await scrape();
    expect(text).toContain('# TYPE keepsake_graphql_requests_total counter');
    expect(text).toContain(
      'keepsake_graphql_requests_total{operation="sendMessage",type="mutation",outcome="ok"} 4',
    );
    expect(text).toMatch(
      /keepsake_graphql_request_duration_seconds_count\{operation="memoryUplift",type="query"\} \d+/,
    );
    expect(text).toContain(
      'keepsake_graphql_requests_total{operation="memoryUplift",type="query",outcome="BAD_USER_INPUT"} 1',
    );
    expect(text).toContain('keepsake_graphql_subscriptions_active 1');
    expect(text).toContain(
      'keepsake_model_calls_total{task="reply",model="openai:fake-chat",outcome="ok"} 4',
    );
    expect(text).toMatch(
      /keepsake_model_tokens_total\{task="reply",model="openai:fake-chat",kind="completion"\} [1-9]/,
    );
    // Jobs wait (the worker is off here): a queue.
    expect(text).toMatch(/keepsake_jobs\{type="[\w.:-]+",status="PENDING"\} [1-9]/);
    expect(text).toMatch(/keepsake_job_oldest_due_seconds \d/);
    expect(text).toMatch(/keepsake_embedding_backlog\{kind="\w+"\} \d+/);
    expect(text).toContain('process_cpu_user_seconds_total');
    // No user's content or ids ever appear in the metrics.
    expect(text).not.toContain('Earl Grey');
    expect(text).not.toContain(arms.memory[0]);

    await client.dispose();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await scrape()).toContain('keepsake_graphql_subscriptions_active 0');
  });
});
