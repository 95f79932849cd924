import { HEALTH_TOKEN, readyDetails } from '../support/health.js';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { EmbeddedLanguageModel } from '../../src/llm/embedded-llm.provider.js';
import { memoryProblem } from '../../src/llm/grounding.js';
import { LANGUAGE_MODEL } from '../../src/llm/language-model.js';
import { PROMPT_EXAMPLES } from '../../src/llm/prompts.js';
import { createLegacy, ok, signIn, startConversation } from '../integration/memories-fixtures.js';
import { PACKAGED_MODEL, packagedModelPath } from '../support/packaged-model.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * LLM=embedded end to end, on the packaged SmolLM2-135M: the model loads in the service's
 * worker and /health/ready names it; a reply streams over graphql-ws and one cut at its cap is
 * marked; a memory command is carried out; what extraction stores from real answers is only
 * what the user said, never a prompt's example. Caps are small so the file stays short (the
 * summaries' path on the same model: src/llm/embedded-llm.provider.spec.ts).
 */
// Generous: a loaded machine has made one short model call take 40 s; a quiet one takes 2 to 4.
jest.setTimeout(600_000);

describe('LLM=embedded (SmolLM2-135M in the service)', () => {
  let t: TestApp;
  let ds: DataSource;
  let user: TestUser & { id: string };
  let legacyId: string;

  beforeAll(async () => {
    await packagedModelPath();
    t = await startTestApp({
      LLM: 'embedded',
      EMBEDDED_LLM_MODEL: PACKAGED_MODEL.name,
      EMBEDDED_LLM_THREADS: '1',
      EMBEDDED_LLM_CONTEXT_SIZE: '2048',
      LLM_REPLY_MAX_TOKENS: '24',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      METRICS_TOKEN: HEALTH_TOKEN,
    });
    ds = t.app.get(DataSource);
    user = await signIn(t, 'embedded-user');
    legacyId = await createLegacy(t, user, 'Grandpa Joe');
  });
  afterAll(() => t?.close());

  it('names the model in /health/ready, with its context, threads and memory', async () => {
    // Loaded while the service started: wait for it, then ask.
    await (t.app.get(LANGUAGE_MODEL) as EmbeddedLanguageModel).warmUp();
    expect((await readyDetails<{ llm: unknown }>(t.url)).body.llm).toEqual({
      model: `embedded:${PACKAGED_MODEL.name}-${PACKAGED_MODEL.file.sha256.slice(0, 8)}`,
      generates: true,
      contextSize: 2048,
      threads: 1,
      memoryMb: expect.any(Number),
    });
  });

  it('streams a reply over graphql-ws, marks it cut at its cap, and carries out a memory command', async () => {
    const conversationId = await startConversation(t, user, legacyId, true);
    const deltas = subscribe<{ assistantReplyDelta: { text: string; done: boolean } }>(
      t.ws(user),
      'subscription($c: ID!) { assistantReplyDelta(conversationId: $c) { text done } }',
      { c: conversationId },
    );
    await deltas.ready;
    const send = async (content: string) =>
      ok(
        await t.gql<{
          sendMessage: {
            reply: {
              content: string;
              placeholder: boolean;
              generation: {
                model: string;
                finishReason: string;
                cutOff: boolean;
                completionTokens: number;
                memoryActions: { action: string }[];
              };
            };
          };
        }>(
          `mutation($i: SendMessageInput!) { sendMessage(input: $i) { reply { content placeholder
             generation { model finishReason cutOff completionTokens memoryActions { action } } } } }`,
          { i: { conversationId, content } },
          user,
        ),
      ).sendMessage.reply;

    const reply = await send('Tell me a long story about Grandpa Joe and his vegetable garden.');
    expect(reply.generation.model).toMatch(/^embedded:smollm2-135m-/);
    expect(reply.placeholder).toBe(false);
    if (reply.generation.finishReason === 'length') {
      expect(reply.generation.cutOff).toBe(true);
      expect(reply.content.endsWith(' […]')).toBe(true);
      expect(reply.generation.completionTokens).toBe(24);
    }
    // The reply's answer can come before its last deltas, which travel through the event bus
    // (LISTEN/NOTIFY on a server).
    const deadline = Date.now() + 15_000;
    while (!deltas.events.some((e) => e.data?.assistantReplyDelta.done) && Date.now() < deadline) {
      await deltas.waitFor(deltas.events.length + 1, 2_000).catch(() => undefined);
    }
    const streamed = deltas.events.map((e) => e.data!.assistantReplyDelta);
    expect(streamed.at(-1)?.done).toBe(true);
    expect(
      streamed
        .filter((d) => !d.done)
        .map((d) => d.text)
        .join(''),
    ).toBe(reply.content);

    const command = await send('Remember that my favourite colour is green.');
    expect(command.generation.memoryActions).toEqual([{ action: 'SAVED' }]);
    const [saved] = await ds.query<{ content: string }[]>(
      `SELECT content FROM memories WHERE user_id = $1 AND content ILIKE '%green%'`,
      [user.id],
    );
    expect(saved.content).toMatch(/favourite colour is green/);
    deltas.unsubscribe();
  });

  it('stores from real answers only what the user said, and never a prompt example', async () => {
    const conversationId = await startConversation(t, user, legacyId, true);
    const exchanges = [
      [
        'My sister Anna lives in Lisbon and I visit her every spring.',
        'You are so kind and caring!',
      ],
      ['I work as a nurse at the hospital in Leeds.', 'My new job has changed your career plans!'],
    ];
    for (const [said, answer] of exchanges) {
      ok(
        await t.gql(
          'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
          { i: { conversationId, content: said } },
          user,
        ),
      );
      ok(
        await t.gql(
          'mutation($i: RecordAssistantMessageInput!) { recordAssistantMessage(input: $i) { id } }',
          { i: { conversationId, content: answer } },
          user,
        ),
      );
    }
    await t.app.get(JobsService).drain({ timeoutMs: 540_000, horizonMs: 0 });
    const stored = await ds.query<{ content: string; said: string }[]>(
      `SELECT m.content, s.content AS said FROM memories m JOIN messages s ON s.id = m.source_message_id
        WHERE m.conversation_id = $1`,
      [conversationId],
    );
    for (const memory of stored) {
      expect(memoryProblem(memory.content, memory.said, undefined)).toBeNull();
      expect(memory.content).not.toMatch(/career plans|kind and caring|<[A-Z]/);
      expect(PROMPT_EXAMPLES).not.toContain(memory.content);
    }
  });
});
