import OpenAI from 'openai';
import { toWireSchema } from '../../src/llm/json-schema-lite.js';
import { extractMemoriesPrompt, summarizeTurnsPrompt, SCHEMA_NAME } from '../../src/llm/prompts.js';
import {
  MEMORIES_SCHEMA,
  TURNS_SUMMARY_SCHEMA,
  parseMemories,
  parseTurnsSummary,
} from '../../src/llm/task-schemas.js';
import {
  FakeOpenAiServer,
  hashedEmbedding,
  reply,
} from '../support/fake-openai/fake-openai.server.js';

describe('FakeOpenAiServer', () => {
  let fake: FakeOpenAiServer;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    client = new OpenAI({ baseURL: fake.url, apiKey: 'fake', maxRetries: 0 });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const summaryInput = {
    legacyName: 'Ada Byrne',
    turns: [
      {
        turnIndex: 0,
        role: 'USER' as const,
        content: 'Mum was born in Cork.\nShe loved gardening and she worked as a nurse.',
        occurredAt: new Date('2025-01-01T00:00:00Z'),
      },
    ],
  };

  it('answers summarize-turns in auto mode with schema-valid JSON, by schema name or marker', async () => {
    const prompt = summarizeTurnsPrompt(summaryInput);
    const messages = [
      { role: 'system' as const, content: prompt.system },
      { role: 'user' as const, content: prompt.user },
    ];
    const bySchema = await client.chat.completions.create({
      model: 'fake-llm',
      messages,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: SCHEMA_NAME.summarizeTurns,
          strict: true,
          schema: toWireSchema(TURNS_SUMMARY_SCHEMA),
        },
      },
    });
    const parsed = parseTurnsSummary(bySchema.choices[0].message.content ?? '', summaryInput);
    expect(parsed.ok).toBe(true);
    if (parsed.ok)
      expect(parsed.value.facts.map((f) => f.category)).toEqual(['MILESTONE', 'HOBBY']);

    const byMarker = await client.chat.completions.create({
      model: 'fake-llm',
      messages,
      response_format: { type: 'json_object' },
    });
    expect(byMarker.choices[0].message.content).toBe(bySchema.choices[0].message.content);
    expect(bySchema.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('answers extract-memories in auto mode with schema-valid JSON', async () => {
    const prompt = extractMemoriesPrompt({ userTurn: 'I want to plant a rose for her.' });
    const completion = await client.chat.completions.create({
      model: 'fake-llm',
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: SCHEMA_NAME.extractMemories,
          strict: true,
          schema: toWireSchema(MEMORIES_SCHEMA),
        },
      },
    });
    const parsed = parseMemories(completion.choices[0].message.content ?? '', {
      userTurn: 'I want to plant a rose for her.',
    });
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        memories: [{ content: 'I want to plant a rose for her.', type: 'GOAL', confidence: 0.72 }],
      },
    });
  });

  it('streams over SSE with a usage chunk and [DONE]', async () => {
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'fake-llm',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hello' }],
      }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const usage = JSON.parse(events[events.length - 2].slice(6)) as {
      usage: { completion_tokens: number };
    };
    expect(usage.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('serves deterministic embeddings of the requested size, as floats or base64', async () => {
    const floats = await client.embeddings.create({
      model: 'fake-embed',
      input: ['a garden of roses', 'a garden of roses'],
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(floats.data[0].embedding).toHaveLength(16);
    expect(floats.data[0].embedding).toEqual(floats.data[1].embedding);
    // The SDK asks for base64 by default and decodes it.
    const decoded = await client.embeddings.create({
      model: 'fake-embed',
      input: 'a garden of roses',
      dimensions: 16,
    });
    expect(fake.requestsFor('embeddings')[1].body.encoding_format).toBe('base64');
    decoded.data[0].embedding.forEach((x, i) =>
      expect(x).toBeCloseTo(hashedEmbedding('a garden of roses', 16)[i], 6),
    );
  });

  it('plays scripted replies in order, then falls back to its handler', async () => {
    fake.enqueue('chat', reply.error(429, { retryAfter: '1' }), reply.raw('{not json'));
    fake.setHandler('chat', () => reply.content('from the handler'));
    const post = () =>
      fetch(`${fake.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const first = await post();
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(await (await post()).text()).toBe('{not json');
    const third = (await (await post()).json()) as { choices: { message: { content: string } }[] };
    expect(third.choices[0].message.content).toBe('from the handler');
    expect(fake.requestsFor('chat')).toHaveLength(3);
  });

  it('rejects a body that is not JSON, and lists its models', async () => {
    const bad = await fetch(`${fake.url}/chat/completions`, { method: 'POST', body: '{' });
    expect(bad.status).toBe(400);
    const models = (await (await fetch(`${fake.url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['fake-llm', 'fake-embed']);
  });
});
