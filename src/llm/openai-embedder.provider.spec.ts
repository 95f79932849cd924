import { reply } from '../../test/support/fake-openai/fake-openai.server.js';
import { fakeOpenAiPerTest } from '../../test/support/fake-openai/openai-model.fixtures.js';
import { cosine } from './embedder.js';
import { ModelOutputError, ModelUnavailableError } from './model.errors.js';
import { OpenAiEmbedder, OpenAiEmbedderOptions } from './openai-embedder.provider.js';

describe('OpenAiEmbedder against the fake server', () => {
  const openai = fakeOpenAiPerTest();

  const embedder = (overrides: Partial<OpenAiEmbedderOptions> = {}) =>
    new OpenAiEmbedder(
      {
        baseURL: openai.fake.url,
        apiKey: 'test',
        model: 'fake-embed',
        dimensions: 64,
        batchSize: 4,
        timeoutMs: 2000,
        retry: { maxRetries: 2, baseMs: 10, maxDelayMs: 100, maxRetryAfterMs: 1000 },
        ...overrides,
      },
      openai.recorder,
    );

  it('embeds in batches, in order, with normalised vectors of the configured size', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `sentence number ${i} about the garden`);
    const e = embedder();
    const vectors = await e.embed(texts);
    expect(e.modelId).toBe('openai:fake-embed');
    expect(vectors).toHaveLength(10);
    for (const v of vectors) {
      expect(v).toHaveLength(64);
      expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    }
    const sent = openai.fake.requestsFor('embeddings').map((r) => r.body);
    expect(sent.map((b) => (b.input as string[]).length)).toEqual([4, 4, 2]);
    expect(sent[0]).toMatchObject({
      model: 'fake-embed',
      dimensions: 64,
      encoding_format: 'float',
    });
    // Same text, same vector: the order survived batching.
    const again = await e.embed([texts[7]]);
    expect(cosine(again[0], vectors[7])).toBeCloseTo(1, 6);
    expect(openai.recorder.calls).toHaveLength(4);
    expect(openai.recorder.calls[0]).toMatchObject({
      task: 'embed',
      ok: true,
      attempts: 1,
      completionTokens: 0,
    });
    expect(openai.recorder.calls[0].promptTokens).toBeGreaterThan(0);
  });

  it('resolves an empty list without a request', async () => {
    await expect(embedder().embed([])).resolves.toEqual([]);
    expect(openai.fake.requests).toHaveLength(0);
  });

  it('sends blank texts as a space, which servers accept', async () => {
    const vectors = await embedder().embed(['', 'hello']);
    expect(vectors).toHaveLength(2);
    expect(openai.fake.requestsFor('embeddings')[0].body.input).toEqual([' ', 'hello']);
  });

  it('rejects vectors of the wrong size', async () => {
    // The fake honours `dimensions`, as text-embedding-3 models do.
    const [short] = await embedder({ dimensions: 32 }).embed(['hello']);
    expect(short).toHaveLength(32);

    openai.fake.enqueue(
      'embeddings',
      reply.json({
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [1, 0, 0] }],
      }),
    );
    const failure = await embedder()
      .embed(['hello'])
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ModelOutputError);
    expect((failure as Error).message).toMatch(/3-d vector; EMBEDDINGS_DIMENSIONS is 64/);
    expect(openai.recorder.last).toMatchObject({ ok: false });
  });

  it('rejects a wrong number of vectors', async () => {
    openai.fake.enqueue('embeddings', reply.json({ object: 'list', data: [] }));
    await expect(embedder().embed(['a', 'b'])).rejects.toThrow(/0 vectors for 2 texts/);
  });

  it('stops sending `dimensions` once the server rejects it', async () => {
    openai.fake.rejectDimensions = true;
    openai.fake.embeddingDimensions = 64;
    const e = embedder();
    await e.embed(['one']);
    await e.embed(['two']);
    const dims = openai.fake.requestsFor('embeddings').map((r) => r.body.dimensions);
    expect(dims).toEqual([64, undefined, undefined]);
  });

  it('retries 429 and 5xx, then fails with ModelUnavailableError', async () => {
    openai.fake.enqueue('embeddings', reply.rateLimited('0'), reply.error(500));
    await expect(embedder().embed(['hello'])).resolves.toHaveLength(1);
    expect(openai.recorder.last?.attempts).toBe(3);

    openai.fake.enqueue('embeddings', reply.error(502), reply.error(502), reply.error(502));
    const err = await embedder()
      .embed(['hello'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as ModelUnavailableError).attempts).toBe(3);
  });

  it('retries a body that is not an embeddings response', async () => {
    openai.fake.enqueue('embeddings', reply.raw('<html>Bad gateway</html>', 'text/html'));
    await expect(embedder().embed(['hello'])).resolves.toHaveLength(1);
    expect(openai.fake.requestsFor('embeddings')).toHaveLength(2);
  });

  it('times out', async () => {
    openai.fake.enqueue('embeddings', reply.hang());
    const err = await embedder({
      timeoutMs: 100,
      retry: { maxRetries: 0, baseMs: 1, maxDelayMs: 1, maxRetryAfterMs: 0 },
    })
      .embed(['hello'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toMatch(/no answer within 100 ms/);
  });
});
