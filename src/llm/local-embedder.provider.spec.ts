import { PARAPHRASES } from '../../test/support/paraphrases.js';
import { cosine } from './embedder.js';
import { LocalEmbedder } from './local-embedder.provider.js';
import { ModelUnavailableError } from './model.errors.js';

describe('LocalEmbedder (Universal Sentence Encoder lite, bundled weights)', () => {
  // One model load for the whole file (about 0.5 s).
  const embedder = new LocalEmbedder();
  beforeAll(() => embedder.warmUp());
  afterAll(() => embedder.close());

  it('produces 512-d, L2-normalised vectors, one per text, in order', async () => {
    expect(embedder.modelId).toBe('local:use-lite-512');
    expect(embedder.dimensions).toBe(512);
    const texts = ['My grandfather loved fishing.', 'The stock market fell today.', ''];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors.slice(0, 2)) {
      expect(v).toHaveLength(512);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    }
    const [again] = await embedder.embed([texts[1]]);
    expect(cosine(again, vectors[1])).toBeCloseTo(1, 5);
  });

  it('resolves an empty list without touching the model', async () => {
    await expect(embedder.embed([])).resolves.toEqual([]);
  });

  it('places paraphrases closer than unrelated sentences', async () => {
    const pairs = PARAPHRASES;
    const vectors = await embedder.embed(pairs.flat());
    for (let i = 0; i < pairs.length; i++) {
      const [a, paraphrase, unrelated] = vectors.slice(i * 3, i * 3 + 3);
      expect(cosine(a, paraphrase)).toBeGreaterThan(cosine(a, unrelated) + 0.2);
    }
  });

  it('keeps the event loop responsive while embedding 64 sentences', async () => {
    const texts = Array.from(
      { length: 64 },
      (_, i) => `Sentence ${i}: my grandmother kept a garden full of tomatoes and roses.`,
    );
    let last = performance.now();
    let maxGap = 0;
    let ticks = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    const vectors = await embedder.embed(texts);
    const elapsed = performance.now() - started;
    clearInterval(ticker);
    expect(vectors).toHaveLength(64);
    // Inline, the whole batch was one blocked stretch (~600 ms on a quiet machine): no tick in
    // between. In the worker the loop keeps ticking; bounds relative to the batch's own time, so
    // that a loaded machine, slower at both, does not decide the outcome.
    expect(elapsed).toBeGreaterThan(100);
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect(maxGap).toBeLessThan(elapsed / 2);
  });

  it('gives a long call back whole and in order, though the worker takes it a batch at a time', async () => {
    const texts = Array.from(
      { length: 70 },
      (_, i) => `Day ${i}: we walked ${i} miles by the sea.`,
    );
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(70);
    for (const i of [0, 31, 32, 69]) {
      const [alone] = await embedder.embed([texts[i]]);
      expect(cosine(alone, vectors[i])).toBeCloseTo(1, 5);
    }
  });

  it('answers queries asked together in one batch, each its own vector', async () => {
    const asked = [
      'Where did we spend the summer?',
      'Who kept the bees?',
      'When did the mill close?',
    ];
    const together = await Promise.all(asked.map((q) => embedder.embed([q], 'query')));
    for (const [i, q] of asked.entries()) {
      const [alone] = await embedder.embed([q], 'query');
      expect(cosine(alone, together[i][0])).toBeCloseTo(1, 5);
    }
    expect(cosine(together[0][0], together[1][0])).toBeLessThan(0.99);
  });

  it('serves a query before the passages still waiting, whoever asked first', async () => {
    const done: string[] = [];
    const passages = Array.from(
      { length: 256 },
      (_, i) => `Page ${i}: the harbour, the boats and the long summer of ${1950 + (i % 40)}.`,
    );
    const indexing = embedder.embed(passages).then(() => done.push('passages'));
    const asked = embedder.embed(['Where did we spend the summer?'], 'query').then(([v]) => {
      done.push('query');
      return v;
    });
    const [query] = await Promise.all([asked, indexing]).then(([v]) => [v]);
    expect(done).toEqual(['query', 'passages']);
    // The same vector as asked alone: jumping the line changes nothing of the answer.
    const [alone] = await embedder.embed(['Where did we spend the summer?'], 'query');
    expect(cosine(alone, query)).toBeCloseTo(1, 5);
  });

  it('fails a whole call when one of its batches fails, and serves the next call', async () => {
    const own = new LocalEmbedder({ batchSize: 2 });
    await own.warmUp();
    const failing = own.embed(['one', 'two', 'three', 'four', 'five']);
    // The worker dies under the call: every part of it fails once, nothing hangs.
    await (own as unknown as { passages: { terminate(): Promise<void> } }).passages.terminate();
    await expect(failing).rejects.toBeInstanceOf(ModelUnavailableError);
    const [again] = await own.embed(['hello world']);
    expect(again).toHaveLength(512);
    await own.close();
  });

  it('fails with ModelUnavailableError when the worker script is missing', async () => {
    const broken = new LocalEmbedder({
      workerUrl: new URL('./missing.worker.mjs', import.meta.url),
    });
    const err = await broken.embed(['hello']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as ModelUnavailableError).retryable).toBe(false);
  });

  it('restarts the worker after close', async () => {
    const own = new LocalEmbedder();
    const [first] = await own.embed(['hello world']);
    await own.close();
    const [second] = await own.embed(['hello world']);
    expect(cosine(first, second)).toBeCloseTo(1, 5);
    await own.close();
  });
});
