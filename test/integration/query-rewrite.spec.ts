import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { SCHEMA_NAME } from '../../src/llm/prompts.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * SEARCH_QUERY_REWRITE against a scripted OpenAI-compatible model: the question is rewritten
 * once per recall, its sub-questions are searched and merged, and a failing, slow or spent
 * model leaves the recall answering as it would without it.
 */
describe('Recall with the query rewritten by the model', () => {
  let fake: FakeOpenAiServer;
  let t: TestApp;
  let ds: DataSource;
  let alice: TestUser;
  let legacyId: string;

  const RECALL = `query($q: String!, $l: ID!) {
    recall(query: $q, legacyId: $l, first: 10) { edges { node { sourceType text } } }
  }`;
  const recall = async (q: string) => {
    const res = await t.gql<{
      recall: { edges: { node: { sourceType: string; text: string } }[] };
    }>(RECALL, { q, l: legacyId }, alice);
    expect(res.errors).toBeUndefined();
    return res.data!.recall.edges.map((e) => e.node);
  };
  const rewriteRequests = () =>
    fake
      .requestsFor('chat')
      .filter((r) => r.body.response_format?.json_schema?.name === SCHEMA_NAME.rewriteQuery);

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake',
      MODEL_MAX_RETRIES: '1',
      MODEL_RETRY_BASE_MS: '10',
      MODEL_TIMEOUT_MS: '5000',
      SEARCH_QUERY_REWRITE: 'on',
      SEARCH_QUERY_REWRITE_TIMEOUT_MS: '700',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
    });
    ds = t.app.get(DataSource);
    alice = await t.user('rewrite-alice');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      {},
      alice,
    );
    legacyId = created.data!.createLegacy.id;
    const at = (day: number) => new Date(Date.UTC(2024, 4, day, 10)).toISOString();
    const imported = await t.gql(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      {
        input: {
          legacyId,
          title: 'Joe',
          messages: [
            {
              role: 'USER',
              content: 'Grandpa Joe fished for walleye on Lake Erie every summer.',
              occurredAt: at(1),
            },
            {
              role: 'USER',
              content: 'He taught chemistry at Lincoln High for thirty years.',
              occurredAt: at(2),
            },
            {
              role: 'USER',
              content: 'His green rowboat was called the Marigold.',
              occurredAt: at(3),
            },
            { role: 'USER', content: 'He made pancakes every Sunday morning.', occurredAt: at(4) },
          ],
        },
      },
      alice,
    );
    expect(imported.errors).toBeUndefined();
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  afterEach(() => fake.reset());

  it('asks the model once, with the question and the legacy, and records the call', async () => {
    const before: { n: number }[] = await ds.query(
      `SELECT count(*)::int AS n FROM model_calls WHERE task = 'rewriteQuery'`,
    );
    const results = await recall('Where did he fish and where did he teach?');
    expect(results.length).toBeGreaterThan(0);
    const [request] = rewriteRequests();
    expect(rewriteRequests()).toHaveLength(1);
    const user = request.body.messages!.find((m) => m.role === 'user')!.content;
    expect(user).toContain('Where did he fish and where did he teach?');
    const system = request.body.messages!.find((m) => m.role === 'system')!.content;
    expect(system).toContain('Grandpa Joe');
    const after: { n: number }[] = await ds.query(
      `SELECT count(*)::int AS n FROM model_calls WHERE task = 'rewriteQuery' AND ok`,
    );
    expect(after[0].n).toBe(before[0].n + 1);
  });

  it('searches each sub-question and merges what they find', async () => {
    // Without a rewrite, the question finds neither first.
    fake.enqueue('chat', reply.object({ answer: '', subQuestions: [] }));
    const plain = (await recall('Tell me two things about him')).slice(0, 2).map((r) => r.text);
    expect(plain).not.toEqual(
      expect.arrayContaining([
        'His green rowboat was called the Marigold.',
        'He taught chemistry at Lincoln High for thirty years.',
      ]),
    );
    fake.enqueue(
      'chat',
      reply.object({
        answer: 'His rowboat had a name.',
        subQuestions: ['What was his green rowboat called?', 'What did he teach at Lincoln High?'],
      }),
    );
    const results = await recall('Tell me two things about him');
    const top = results.slice(0, 2).map((r) => r.text);
    expect(top).toEqual(
      expect.arrayContaining([
        'His green rowboat was called the Marigold.',
        'He taught chemistry at Lincoln High for thirty years.',
      ]),
    );
  });

  it('answers without the rewrite when the model fails', async () => {
    fake.enqueue('chat', reply.error(503), reply.error(503));
    const results = await recall('Where did he fish?');
    expect(results.map((r) => r.text)).toContain(
      'Grandpa Joe fished for walleye on Lake Erie every summer.',
    );
    expect(rewriteRequests()).toHaveLength(2);
  });

  it('answers without the rewrite when the model is slow, after its time limit', async () => {
    fake.enqueue('chat', reply.hang());
    const started = Date.now();
    const results = await recall('Where did he fish?');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(results.map((r) => r.text)).toContain(
      'Grandpa Joe fished for walleye on Lake Erie every summer.',
    );
  });

  it('answers without the rewrite when the answer is not what was asked for', async () => {
    fake.enqueue('chat', reply.content('not json'), reply.content('still not json'));
    const results = await recall('Where did he fish?');
    expect(results.map((r) => r.text)).toContain(
      'Grandpa Joe fished for walleye on Lake Erie every summer.',
    );
  });
});
