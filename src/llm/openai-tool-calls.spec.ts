import { FakeOpenAiServer, reply } from '../../test/support/fake-openai/fake-openai.server.js';
import { MemoryUsageRecorder } from '../../test/support/fake-openai/memory-usage.recorder.js';
import type { ReplyInput, ReplyTools } from './language-model.js';
import { OpenAiLanguageModel } from './openai-llm.provider.js';
import { MAX_TOOL_ROUNDS } from './openai-tool-calls.js';

describe('OpenAiLanguageModel replies with tools', () => {
  let fake: FakeOpenAiServer;
  let recorder: MemoryUsageRecorder;
  let executed: { name: string; args: string }[];

  const tools: ReplyTools = {
    definitions: [
      {
        name: 'note',
        description: 'Takes a note.',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string', maxLength: 50 } },
          required: ['text'],
          additionalProperties: false,
        },
      },
    ],
    execute: (name, args) => {
      executed.push({ name, args });
      return Promise.resolve(JSON.stringify({ ok: true, n: executed.length }));
    },
  };
  const input: ReplyInput = {
    system: 'You are Keepsake.',
    messages: [{ role: 'USER', content: 'Note that I like tea.' }],
    tools,
  };
  const model = () =>
    new OpenAiLanguageModel(
      {
        baseURL: fake.url,
        apiKey: 'test',
        model: 'fake-llm',
        structuredOutput: 'json_schema',
        timeoutMs: 2000,
        retry: { maxRetries: 2, baseMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10, random: () => 0.5 },
        replyMaxTokens: 512,
      },
      recorder,
    );

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    recorder = new MemoryUsageRecorder();
    executed = [];
  });

  it.each([
    ['streamed', true],
    ['whole', false],
  ])('runs the calls (%s), feeds the results back and returns the answer', async (_, stream) => {
    fake.enqueue(
      'chat',
      reply.toolCalls({ name: 'note', arguments: { text: 'likes tea' }, id: 'call_1' }),
      reply.content('Noted.'),
    );
    const deltas: string[] = [];
    const result = await model().reply(input, stream ? (d) => deltas.push(d) : undefined);
    expect(result.text).toBe('Noted.');
    expect(executed).toEqual([{ name: 'note', args: '{"text":"likes tea"}' }]);
    const [first, second] = fake.requestsFor('chat');
    // The whole schema is sent, limits included, as for structured output.
    expect(first.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'note',
          description: 'Takes a note.',
          parameters: {
            type: 'object',
            properties: { text: { type: 'string', maxLength: 50 } },
            required: ['text'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(second.body.messages!.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'note', arguments: '{"text":"likes tea"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true,"n":1}' },
    ]);
    // Each request is recorded; the reply's usage adds them up.
    expect(recorder.calls).toHaveLength(2);
    expect(result.usage.promptTokens).toBe(
      recorder.calls[0].promptTokens + recorder.calls[1].promptTokens,
    );
    if (stream) expect(deltas.join('')).toBe('Noted.');
  });

  it(`stops offering tools after ${MAX_TOOL_ROUNDS} rounds`, async () => {
    const call = reply.toolCalls({ name: 'note', arguments: { text: 'again' } });
    fake.enqueue('chat', call, call, call, reply.content('Done.'));
    const result = await model().reply(input, () => undefined);
    expect(result.text).toBe('Done.');
    expect(executed).toHaveLength(MAX_TOOL_ROUNDS);
    const requests = fake.requestsFor('chat');
    expect(requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
    expect(requests[MAX_TOOL_ROUNDS].body.tools).toBeUndefined();
  });

  it('retries a failed request after tool calls without running the tools again', async () => {
    fake.enqueue(
      'chat',
      reply.toolCalls({ name: 'note', arguments: { text: 'once' } }),
      reply.error(503),
      reply.content('Only once.'),
    );
    const result = await model().reply(input, () => undefined);
    expect(result.text).toBe('Only once.');
    expect(executed).toHaveLength(1);
  });

  it('resends without tools to a server that rejects them, and offers none from then on', async () => {
    fake.enqueue(
      'chat',
      reply.error(400, { message: "'tools' is not supported by this model", param: 'tools' }),
      reply.content('Plain answer.'),
      reply.content('Another.'),
    );
    const llm = model();
    expect(llm.acceptsTools).toBe(true);
    const result = await llm.reply(input, () => undefined);
    expect(result.text).toBe('Plain answer.');
    expect(llm.acceptsTools).toBe(false);
    await llm.reply(input);
    const requests = fake.requestsFor('chat');
    expect(requests.map((r) => r.body.tools === undefined)).toEqual([false, true, true]);
    expect(recorder.calls.map((c) => c.attempts)).toEqual([2, 1]);
  });

  it('does not take another 400 for a rejection of tools', async () => {
    fake.enqueue('chat', reply.error(400, { message: 'messages: too long' }));
    const llm = model();
    await expect(llm.reply(input, () => undefined)).rejects.toThrow();
    expect(llm.acceptsTools).toBe(true);
  });

  it('sends no tools when none are given', async () => {
    fake.enqueue('chat', reply.content('Hello.'));
    await model().reply({ system: input.system, messages: input.messages });
    expect(fake.requestsFor('chat')[0].body.tools).toBeUndefined();
  });
});
