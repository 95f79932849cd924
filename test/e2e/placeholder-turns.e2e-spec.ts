import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { NO_MODEL_NOTICE } from '../../src/llm/local-llm.provider.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * With no language model configured the agent answers with a notice, not a reply. The notice
 * stays in the log, marked `placeholder`, and nothing derived from the conversation reads it:
 * search and recall, summaries (and the facts found in them), memory extraction, period
 * summaries, and the recent window a model would continue.
 */
describe('placeholder turns', () => {
  let t: TestApp;
  let ds: DataSource;
  let user: TestUser;
  let legacyId: string;
  let conversationId: string;
  const NOTICE_WORDS = 'running without a language model';

  const ok = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const res = await t.gql<T>(query, variables, user);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const send = (content: string) =>
    ok<{
      sendMessage: {
        message: { id: string; placeholder: boolean };
        reply: { id: string; content: string; placeholder: boolean };
      };
    }>(
      `mutation($input: SendMessageInput!) { sendMessage(input: $input) {
         message { id placeholder } reply { id content placeholder } } }`,
      { input: { conversationId, content } },
    );

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    user = await t.user('placeholder-user');
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      )
    ).createLegacy.id;
    conversationId = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l, remember: true }) { id } }',
        { l: legacyId },
      )
    ).startConversation.id;
  });
  afterAll(() => t?.close());

  it('stores the offline notice as a placeholder turn, the user’s turn as said', async () => {
    const sent = await send('Grandpa Joe grew tomatoes in the back garden every summer.');
    expect(sent.sendMessage.message.placeholder).toBe(false);
    expect(sent.sendMessage.reply.placeholder).toBe(true);
    expect(sent.sendMessage.reply.content.endsWith(NO_MODEL_NOTICE)).toBe(true);
    await send('I love the smell of tomato leaves, it reminds me of him.');
    await t.app.get(JobsService).drain();
  });

  it('leaves notices out of search and recall', async () => {
    const [indexed] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM message_segments s JOIN messages m ON m.id = s.message_id
        WHERE m.conversation_id = $1 AND m.placeholder`,
      [conversationId],
    );
    expect(indexed.n).toBe(0);
    const recall = await ok<{
      recall: { edges: { node: { sourceType: string; text: string } }[] };
    }>(
      'query($l: ID!) { recall(legacyId: $l, query: "tomatoes") { edges { node { sourceType text } } } }',
      { l: legacyId },
    );
    expect(recall.recall.edges.length).toBeGreaterThan(0);
    expect(JSON.stringify(recall)).not.toContain(NOTICE_WORDS);
  });

  it('keeps notices out of the recent window a model would continue', async () => {
    const context = await ok<{ context: { recent: { id: string; placeholder: boolean }[] } }>(
      'query($c: ID!) { context(conversationId: $c, query: "Tell me about the garden") { recent { id placeholder } } }',
      { c: conversationId },
    );
    expect(context.context.recent).toHaveLength(2);
    expect(context.context.recent.every((m) => !m.placeholder)).toBe(true);
  });

  it('summarizes what was said, not the notices, and takes memories from the user’s words', async () => {
    const summarized = await ok<{ summarizeNow: { chunks: { content: string }[] } }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { chunks { content } } }',
      { c: conversationId },
    );
    expect(summarized.summarizeNow.chunks.length).toBeGreaterThan(0);
    expect(JSON.stringify(summarized)).not.toContain(NOTICE_WORDS);
    const derived = await ds.query<{ text: string }[]>(
      `SELECT content AS text FROM conversation_chunks WHERE conversation_id = $1
       UNION ALL SELECT content FROM facts WHERE legacy_id = $2
       UNION ALL SELECT content FROM memories WHERE legacy_id = $2`,
      [conversationId, legacyId],
    );
    expect(derived.length).toBeGreaterThan(0);
    for (const row of derived) expect(row.text).not.toContain(NOTICE_WORDS);
  });

  it('keeps a notice marked: the log cannot be rewritten to unmark it', async () => {
    await expect(
      ds.query(`UPDATE messages SET placeholder = false WHERE conversation_id = $1`, [
        conversationId,
      ]),
    ).rejects.toThrow('messages are immutable');
  });
});
