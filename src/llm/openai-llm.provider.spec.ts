import { reply } from '../../test/support/fake-openai/fake-openai.server.js';
import {
  fakeOpenAiPerTest,
  openAiModelOn,
  retry,
} from '../../test/support/fake-openai/openai-model.fixtures.js';
import { SummarizeTurnsInput } from './language-model.js';
import { ModelOutputError, ModelUnavailableError } from './model.errors.js';
import { OpenAiLanguageModelOptions } from './openai-llm.provider.js';
import { SCHEMA_NAME } from './prompts.js';
import { countTokens } from './tokenizer.js';

const span: SummarizeTurnsInput = {
  legacyName: 'Joe Miller',
  turns: [
    {
      turnIndex: 3,
      role: 'USER',
      content:
        'Dad worked as a carpenter for thirty years. He built the kitchen table we still eat at. He loved fishing on the lake every summer.',
      occurredAt: new Date('2025-01-05T10:00:00Z'),
    },
    {
      turnIndex: 4,
      role: 'ASSISTANT',
      content: 'That table must hold a lot of memories of him and the lake.',
      occurredAt: new Date('2025-01-05T10:00:10Z'),
    },
  ],
};

const validSummary = {
  summary:
    'The user remembered their dad, a carpenter who built the kitchen table. The tone was warm.',
  structured: { facts: [], preferences: [], decisions: [], todos: [], entities: ['Joe Miller'] },
  facts: [
    {
      content: 'Joe Miller worked as a carpenter for thirty years.',
      category: 'OCCUPATION',
      confidence: 0.95,
      sourceTurnIndexes: [3],
    },
  ],
};

describe('OpenAiLanguageModel against the fake server', () => {
  const openai = fakeOpenAiPerTest();

  const model = (overrides: Partial<OpenAiLanguageModelOptions> = {}) =>
    openAiModelOn(openai.fake, openai.recorder, overrides);

  it('asks for strict json_schema output and returns the validated summary (auto mode)', async () => {
    const result = await model().summarizeTurns(span);
    const sent = openai.fake.requestsFor('chat')[0].body;
    expect(sent.response_format?.type).toBe('json_schema');
    expect(sent.response_format?.json_schema?.name).toBe(SCHEMA_NAME.summarizeTurns);
    expect(sent.response_format?.json_schema?.strict).toBe(true);
    expect(result.summary.length).toBeGreaterThan(0);
    expect(result.facts.map((f) => f.category)).toContain('OCCUPATION');
    expect(result.facts.every((f) => f.sourceTurnIndexes.every((i) => i === 3))).toBe(true);
    expect(result.call).toMatchObject({
      task: 'summarizeTurns',
      model: 'openai:fake-llm',
      attempts: 1,
      ok: true,
      usageEstimated: false,
    });
    expect(result.call.promptTokens).toBeGreaterThan(100);
    expect(openai.recorder.calls).toEqual([result.call]);
  });

  it('extracts memories in auto mode', async () => {
    const result = await model().extractMemories({
      userTurn: 'I want to write a book about my dad. You are so helpful!',
    });
    expect(result.memories).toEqual([
      { content: 'I want to write a book about my dad.', type: 'GOAL', confidence: 0.72 },
    ]);
  });

  it('falls back to json_object when the server rejects json_schema, and remembers it', async () => {
    openai.fake.rejectJsonSchema = true;
    const llm = model();
    const first = await llm.extractMemories({ userTurn: 'I live in Porto.' });
    expect(first.memories[0]).toMatchObject({ type: 'FACT' });
    // The whole schema, then its structure alone, then json_object.
    expect(first.call.attempts).toBe(3);
    expect(llm.structuredOutputMode).toBe('json_object');

    const second = await llm.summarizeTurns(span);
    expect(second.call.attempts).toBe(1);
    const requests = openai.fake.requestsFor('chat');
    const formats = requests.map((r) => r.body.response_format?.type);
    expect(formats).toEqual(['json_schema', 'json_schema', 'json_object', 'json_object']);
    const schemas = requests.slice(0, 2).map((r) => JSON.stringify(r.body.response_format));
    expect(schemas[0]).toContain('"maxItems":3');
    expect(schemas[1]).not.toMatch(/maxItems|minimum|maxLength/);
    // Without a schema on the wire, the prompt carries it.
    const system = requests[3].body.messages?.[0].content ?? '';
    expect(system).toContain('JSON Schema');
  });

  it('asks again, differently, after output that is not JSON, then gives up', async () => {
    const bad = reply.content('Sure! Here are the memories: none.', {
      usage: { prompt_tokens: 500, completion_tokens: 9 },
    });
    openai.fake.enqueue('chat', bad, bad, bad);
    const err = await model()
      .extractMemories({ userTurn: 'I live in Porto.' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelOutputError);
    expect((err as ModelOutputError).attempts).toBe(3);
    expect((err as ModelOutputError).message).toMatch(/not JSON/);
    const sent = openai.fake.requestsFor('chat').map((r) => r.body as Record<string, unknown>);
    expect(sent).toHaveLength(3);
    // Every request carries its token cap; each retry another temperature and seed, and what
    // was wrong with the answer before it.
    expect(sent.map((b) => b.max_tokens)).toEqual([400, 400, 400]);
    expect(sent.map((b) => b.temperature)).toEqual([undefined, 0.5, 0.9]);
    expect(new Set(sent.map((b) => b.seed)).size).toBe(3);
    const lastUser = (b: Record<string, unknown>) =>
      (b.messages as { content: string }[]).at(-1)!.content;
    expect(lastUser(sent[0])).not.toMatch(/refused/);
    expect(lastUser(sent[1])).toMatch(/previous answer was refused: .*JSON/);
    // Refused answers cost tokens too: all three are recorded.
    expect(openai.recorder.last).toMatchObject({
      ok: false,
      attempts: 3,
      promptTokens: 1500,
      completionTokens: 27,
      usageEstimated: false,
    });
  });

  it('keeps the answer of a repair that succeeds, recording what the refused one cost', async () => {
    openai.fake.enqueue(
      'chat',
      reply.content('{"memories": [', { usage: { prompt_tokens: 400, completion_tokens: 400 } }),
    );
    const result = await model().extractMemories({ userTurn: 'I live in Porto.' });
    expect(result.memories).toEqual([
      { content: 'I live in Porto.', type: 'FACT', confidence: 0.74 },
    ]);
    expect(result.call.attempts).toBe(2);
    expect(result.call.promptTokens).toBeGreaterThan(400);
    expect(result.call.completionTokens).toBeGreaterThan(400);
  });

  it('rejects JSON that violates the schema, never using part of it', async () => {
    const bad = reply.object({
      memories: [
        { content: 'The user lives in Porto.', type: 'FACT', confidence: 0.9 },
        { content: 'The user is sad.', type: 'MOOD', confidence: 1.4 },
      ],
    });
    openai.fake.enqueue('chat', bad, bad, bad);
    const err = (await model()
      .extractMemories({ userTurn: 'I live in Porto.' })
      .catch((e: unknown) => e)) as ModelOutputError;
    expect(err).toBeInstanceOf(ModelOutputError);
    expect(err.problems).toEqual([
      '$.memories[1].type: expected one of FACT, EMOTION, GOAL, PATTERN, RELATIONSHIP, PREFERENCE',
      '$.memories[1].confidence: expected <= 1',
    ]);
  });

  it('rejects facts citing turns outside the span', async () => {
    const bad = reply.object({
      ...validSummary,
      facts: [{ ...validSummary.facts[0], sourceTurnIndexes: [3, 9] }],
    });
    openai.fake.enqueue('chat', bad, bad, bad);
    const err = (await model()
      .summarizeTurns(span)
      .catch((e: unknown) => e)) as ModelOutputError;
    expect(err).toBeInstanceOf(ModelOutputError);
    expect(err.problems).toEqual(['$.facts[0].sourceTurnIndexes: turn 9 is not in the span']);
  });

  it('accepts a fenced JSON answer in json_object mode', async () => {
    openai.fake.enqueue(
      'chat',
      reply.content('```json\n' + JSON.stringify(validSummary) + '\n```'),
    );
    const result = await model({ structuredOutput: 'json_object' }).summarizeTurns(span);
    expect(result.facts).toEqual(validSummary.facts);
    expect(openai.fake.requestsFor('chat')[0].body.response_format?.type).toBe('json_object');
  });

  it('treats a JSON answer cut at the token limit as invalid', async () => {
    const cut = reply.content('{"memories": [', { finishReason: 'length' });
    openai.fake.enqueue('chat', cut, cut, cut);
    await expect(model().extractMemories({ userTurn: 'I live in Porto.' })).rejects.toThrow(
      /token limit/,
    );
  });

  it('retries 5xx with growing backoff, then succeeds', async () => {
    openai.fake.enqueue('chat', reply.error(500), reply.error(503));
    const started = Date.now();
    const result = await model().extractMemories({ userTurn: 'I live in Porto.' });
    expect(result.call.attempts).toBe(3);
    // Equal jitter with random=0.5: 15 ms, then 30 ms.
    const at = openai.fake.requestsFor('chat').map((r) => r.at - started);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(12);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(25);
  });

  it('gives up after the retries with ModelUnavailableError', async () => {
    openai.fake.enqueue('chat', reply.error(500), reply.error(502), reply.error(503));
    const err = (await model()
      .extractMemories({ userTurn: 'I live in Porto.' })
      .catch((e: unknown) => e)) as ModelUnavailableError;
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err.attempts).toBe(3);
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/failed after 3 attempt\(s\): 503/);
    expect(openai.recorder.last).toMatchObject({ ok: false, attempts: 3 });
  });

  it('honours Retry-After on 429', async () => {
    openai.fake.enqueue('chat', reply.rateLimited('0.3'));
    const started = Date.now();
    await model().extractMemories({ userTurn: 'I live in Porto.' });
    const [first, second] = openai.fake.requestsFor('chat');
    expect(second.at - first.at).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('fails at once when Retry-After is longer than it may wait, passing it on', async () => {
    openai.fake.enqueue('chat', reply.rateLimited('120'));
    const err = (await model()
      .extractMemories({ userTurn: 'I live in Porto.' })
      .catch((e: unknown) => e)) as ModelUnavailableError;
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err.retryAfterSeconds).toBe(120);
    expect(openai.fake.requestsFor('chat')).toHaveLength(1);
  });

  it('does not retry a 401', async () => {
    openai.fake.enqueue('chat', reply.error(401, { message: 'bad key' }));
    const err = (await model()
      .extractMemories({ userTurn: 'I live in Porto.' })
      .catch((e: unknown) => e)) as ModelUnavailableError;
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err.retryable).toBe(false);
    expect(openai.fake.requestsFor('chat')).toHaveLength(1);
  });

  it('times out a server that never answers, retrying each time', async () => {
    openai.fake.enqueue('chat', reply.hang(), reply.hang());
    const started = Date.now();
    const err = (await model({ timeoutMs: 150, retry: { ...retry, maxRetries: 1 } })
      .extractMemories({ userTurn: 'I live in Porto.' })
      .catch((e: unknown) => e)) as ModelUnavailableError;
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err.message).toMatch(/no answer within 150 ms/);
    expect(err.attempts).toBe(2);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('retries dropped connections and malformed bodies', async () => {
    openai.fake.enqueue('chat', reply.drop(), reply.raw('{"choices": [{"mess'));
    const result = await model().extractMemories({ userTurn: 'I live in Porto.' });
    expect(result.call.attempts).toBe(3);
  });

  it('estimates usage with the tokenizer when the server sends none', async () => {
    openai.fake.enqueue('chat', reply.content('{"memories": []}', { usage: null }));
    const result = await model().extractMemories({ userTurn: 'Hello there.' });
    expect(result.call.usageEstimated).toBe(true);
    expect(result.call.promptTokens).toBeGreaterThan(100);
    expect(result.call.completionTokens).toBe(countTokens('{"memories": []}'));
  });
});
