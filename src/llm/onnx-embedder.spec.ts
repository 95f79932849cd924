import { similarityOf } from '../embeddings/vector-sql.js';
import { PARAPHRASES } from '../../test/support/paraphrases.js';
import { cosine } from './embedder.js';
import { LocalEmbedder } from './local-embedder.provider.js';
import { cacheFolder, defaultModelsDir, verifiedFiles } from './model-files.js';
import { SENTENCE_MODELS } from './sentence-models.js';

/**
 * The fetched encoders, run from the shared model cache as the service runs them: `npm run
 * models:fetch` puts them there (`.ci/run` and `npm run test:all` do it before the suite), so
 * this file needs no network.
 */
describe.each(Object.values(SENTENCE_MODELS))('LocalEmbedder on $name (ONNX)', (model) => {
  let embedder: LocalEmbedder;

  beforeAll(async () => {
    const paths = await verifiedFiles(cacheFolder(defaultModelsDir(), model), model);
    if (!paths) {
      throw new Error(
        `${model.name} is not in ${defaultModelsDir()}: run \`npm run models:fetch -- --model ${model.name}\``,
      );
    }
    embedder = new LocalEmbedder({ onnx: { model, paths } });
    await embedder.warmUp();
  });
  afterAll(() => embedder?.close());

  it('produces L2-normalised vectors of its size, one per text, in order, batch or not', async () => {
    expect(embedder.modelId).toBe(model.modelId);
    expect(embedder.dimensions).toBe(384);
    const texts = ['My grandfather loved fishing.', 'The stock market fell today.', 'Hi'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(384);
      expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    }
    // Batched with texts of other lengths or alone, the same vector but for the int8 model's
    // dynamic quantization, whose scales follow the whole batch (cosine 0.996 to 0.998).
    const [again] = await embedder.embed([texts[1]]);
    expect(cosine(again, vectors[1])).toBeGreaterThan(0.99);
  });

  it('embeds a query with its prefix and finds the passage that answers it', async () => {
    const passages = await embedder.embed([
      'Every summer he grew tomatoes in the back garden.',
      'The invoice for the roof repair is due on Friday.',
      'She sang alto in the church choir for forty years.',
    ]);
    const [query] = await embedder.embed(['What vegetables did he grow?'], 'query');
    const [asPassage] = await embedder.embed(['What vegetables did he grow?'], 'passage');
    expect(cosine(query, asPassage)).toBeLessThan(0.999);
    const scores = passages.map((p) => cosine(query, p));
    expect(scores.indexOf(Math.max(...scores))).toBe(0);
  });

  it('places paraphrases closer than unrelated sentences, on the common similarity scale', async () => {
    const pairs = PARAPHRASES;
    const vectors = await embedder.embed(pairs.flat());
    for (let i = 0; i < pairs.length; i++) {
      const [a, paraphrase, unrelated] = vectors.slice(i * 3, i * 3 + 3);
      const near = similarityOf(model.modelId, 1 - cosine(a, paraphrase));
      const far = similarityOf(model.modelId, 1 - cosine(a, unrelated));
      // The thresholds (0.6 related, 0.85 duplicate) were set on this scale with USE-lite.
      expect(near).toBeGreaterThan(0.6);
      expect(far).toBeLessThan(0.45);
    }
  });

  it('cuts a text longer than the model reads instead of failing', async () => {
    const long = 'My grandmother kept a garden full of tomatoes and roses. '.repeat(400);
    const [v] = await embedder.embed([long]);
    expect(v).toHaveLength(384);
    expect(Math.hypot(...v)).toBeCloseTo(1, 4);
  });

  it('keeps the event loop responsive while embedding 64 sentences', async () => {
    const texts = Array.from(
      { length: 64 },
      (_, i) => `Sentence ${i}: my grandmother kept a garden full of tomatoes and roses.`,
    );
    let last = performance.now();
    let maxGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    const vectors = await embedder.embed(texts);
    const elapsed = performance.now() - started;
    clearInterval(ticker);
    expect(vectors).toHaveLength(64);
    // Inline, the loop would stop for the whole run; in the worker it keeps ticking (the
    // bound leaves room for a machine busy with other work).
    expect(maxGap).toBeLessThan(Math.min(150, elapsed / 3));
  });
});
