/**
 * npm run bench:stories -- [--pages 500] [--format both|pdf|text] [--embeddings local|fake]
 *
 * Indexing uploaded documents: the real application on a fresh embedded database, its job
 * worker running in-process, takes a generated family memoir of --pages pages (300-400 words
 * each, varied by a seeded generator) as a PDF made with pdfkit and as the same text in one
 * Markdown file. Each is uploaded over HTTP (POST /legacies/:id/documents, which reads the file
 * before it answers) and `story(id)` is polled every 100 ms until READY, while the background
 * job splits it into passages and embeds them. For each input: the upload's latency, when the
 * passages appeared (split) and when it was READY, pages per second over the whole, passages
 * and passages embedded per second; the peak RSS of the process (sampled every 50 ms by a
 * thread of its own, so that a stalled event loop does not hide a peak) and its increase over
 * the RSS just before the upload; the event-loop delay of the service (this process) from the
 * upload to READY, and the longest stall in each stage (upload, split, embedding, as the polls
 * see them). Embeddings are the local USE-lite model by default (the real cost);
 * `--embeddings fake` uses the scripted OpenAI-compatible test server, in this process too
 * (hashed words, nearly free), which leaves the cost of parsing, splitting and storing. A
 * one-page PDF is indexed first, unmeasured: pdf.js and the embedder load once per process.
 * Exits with 1 if a story fails, is not READY within 15 minutes, or has passages without a
 * vector.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import PDFDocument from 'pdfkit';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { STORY_INDEX_JOB } from '../src/stories/story-jobs.js';
import { FakeOpenAiServer } from '../test/support/fake-openai/fake-openai.server.js';
import { BENCH_LIMITS, JWT_SECRET, rng, table, token } from './support.js';

const MAX_PAGES = 2000; // DOCUMENT_MAX_PAGES's default
const POLL_MS = 100;
const RSS_SAMPLE_MS = 50;
const LOOP_RESOLUTION_MS = 10;
const READY_TIMEOUT_MS = 15 * 60_000;
const PAGES_PER_CHAPTER = 12;
const TITLE = 'The House on Orchard Lane: A Family Memoir';

function options() {
  const { values } = parseArgs({
    options: {
      pages: { type: 'string', default: '500' },
      format: { type: 'string', default: 'both' },
      embeddings: { type: 'string', default: 'local' },
    },
  });
  const pages = Number(values.pages);
  if (!Number.isInteger(pages) || pages < 1 || pages > MAX_PAGES) {
    throw new Error(`--pages must be 1 to ${MAX_PAGES} (DOCUMENT_MAX_PAGES)`);
  }
  if (!['both', 'pdf', 'text'].includes(values.format)) {
    throw new Error('--format must be both, pdf or text');
  }
  if (values.embeddings !== 'fake' && values.embeddings !== 'local') {
    throw new Error('--embeddings must be local or fake');
  }
  return { pages, format: values.format, embeddings: values.embeddings };
}

// ---- the memoir ---------------------------------------------------------------------------

const PEOPLE = [
  'Grandma Rose',
  'Grandpa Joe',
  'my mother',
  'my father',
  'Aunt Edith',
  'Uncle Frank',
  'my brother Tommy',
  'my sister Clara',
  'cousin Ruth',
  'old Mr. Kowalski next door',
  'Father Brennan',
  'Mrs. Lindqvist from the bakery',
];
const PLACES = [
  'the farm outside Dayton',
  'the kitchen on Orchard Lane',
  'the lake at Cedar Point',
  "St. Mary's church",
  'the hardware store on Main Street',
  'the apple orchard behind the barn',
  "Aunt Edith's boarding house in Toledo",
  'the railway station',
  'the county fair',
  'the creek below the mill',
  'the front porch',
  'the schoolhouse on Elm Road',
];
const DEEDS = [
  'taught me to bake bread without a recipe',
  'mended the fence after the spring storms',
  'sang hymns while shelling peas',
  'kept a jar of buttons for every occasion',
  'drove the old Ford to town every Saturday',
  'read the newspaper aloud after supper',
  'planted tomatoes in long crooked rows',
  'told stories about the war that nobody else would tell',
  'fixed radios for half the neighbourhood',
  'saved every letter in a shoebox under the bed',
  'played the fiddle at every wedding in the county',
  'walked two miles to fetch the doctor in the snow',
  'canned peaches until the cellar shelves bent',
  'lost the good watch in the creek and never found it',
];
const SEASONS = ['spring', 'summer', 'autumn', 'winter'];
const FEELINGS = [
  'I did not understand it then, but I do now.',
  'We laughed about it for years afterwards.',
  'Nobody dared to mention it at the dinner table.',
  'It is one of the clearest memories I have of those years.',
  'I still think of it whenever the first frost comes.',
  'My mother cried a little, and then she put the kettle on.',
  'That was simply how things were done in our family.',
  'I wish I had asked more questions while there was still time.',
];
const DETAILS = [
  'the smell of wood smoke and wet wool',
  'the creak of the third stair',
  'a blue enamel coffee pot that was never quite clean',
  'the radio playing dance music from Chicago',
  'a quilt made from our old Sunday dresses',
  'the sound of the train whistle at dusk',
  'flour on every surface of the kitchen',
  'a dog named Biscuit who followed us everywhere',
  'lamplight on the oilcloth table',
  'the bells of the church on a cold morning',
];
const CHAPTERS = [
  'Early Years',
  'The Farm',
  'School Days',
  'The War',
  'Coming Home',
  'The Wedding',
  'Hard Winters',
  'Moving to Town',
  'The Store',
  'Summers at the Lake',
  'Letters',
  'Growing Old',
];

function memoir(pageCount: number): { chapters: (string | null)[]; pages: string[][] } {
  const random = rng(1931);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
  const sentence = (year: number): string => {
    const who = pick(PEOPLE);
    switch (Math.floor(random() * 6)) {
      case 0:
        return `In the ${pick(SEASONS)} of ${year}, ${who} ${pick(DEEDS)} at ${pick(PLACES)}.`;
      case 1:
        return `${cap(who)} ${pick(DEEDS)}, and ${pick(PEOPLE)} ${pick(DEEDS)}.`;
      case 2:
        return `What I remember most about ${pick(PLACES)} is ${pick(DETAILS)}, and ${pick(DETAILS)}.`;
      case 3:
        return `${cap(who)} once told me that ${pick(PEOPLE)} ${pick(DEEDS)} back in ${year - 1 - Math.floor(random() * 30)}.`;
      case 4:
        return pick(FEELINGS);
      default:
        return `We went to ${pick(PLACES)} with ${who} nearly every ${pick(SEASONS)} until ${year + 1 + Math.floor(random() * 4)}.`;
    }
  };
  const chapters: (string | null)[] = [];
  const pages: string[][] = [];
  for (let p = 0; p < pageCount; p++) {
    const chapter = p / PAGES_PER_CHAPTER;
    chapters.push(
      Number.isInteger(chapter)
        ? `Chapter ${chapter + 1}: ${CHAPTERS[chapter % CHAPTERS.length]}`
        : null,
    );
    const year = 1938 + Math.floor(p / 6);
    const target = 300 + Math.floor(random() * 100);
    const paragraphs: string[] = [];
    let words = 0;
    while (words < target) {
      const sentences: string[] = [];
      const length = 4 + Math.floor(random() * 4);
      while (sentences.length < length && words < target) {
        const s = sentence(year);
        sentences.push(s);
        words += s.split(' ').length;
      }
      paragraphs.push(sentences.join(' '));
    }
    pages.push(paragraphs);
  }
  return { chapters, pages };
}

function makePdf(book: ReturnType<typeof memoir>): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ compress: true, info: { Title: TITLE } });
    const parts: Buffer[] = [];
    let pages = 1;
    doc.on('pageAdded', () => pages++);
    doc.on('data', (part: Buffer) => parts.push(part));
    doc.on('end', () => {
      // A page that overflowed would have added one: the PDF must have exactly its pages.
      if (pages !== book.pages.length) {
        reject(new Error(`the PDF has ${pages} pages, not ${book.pages.length}`));
      } else resolve(new Uint8Array(Buffer.concat(parts)));
    });
    doc.on('error', reject);
    book.pages.forEach((paragraphs, i) => {
      if (i > 0) doc.addPage();
      const chapter = book.chapters[i];
      if (chapter) doc.fontSize(16).text(chapter, { paragraphGap: 10 });
      for (const paragraph of paragraphs) doc.fontSize(11).text(paragraph, { paragraphGap: 8 });
    });
    doc.end();
  });
}

function makeMarkdown(book: ReturnType<typeof memoir>): Uint8Array {
  const blocks = [`# ${TITLE}`];
  book.pages.forEach((paragraphs, i) => {
    const chapter = book.chapters[i];
    if (chapter) blocks.push(`## ${chapter}`);
    blocks.push(...paragraphs);
  });
  return new TextEncoder().encode(blocks.join('\n\n') + '\n');
}

// ---- measuring ----------------------------------------------------------------------------

/**
 * The process's RSS sampled every 50 ms by a thread of its own (RSS is the whole process's),
 * its high-water mark kept in shared memory, in KiB, where `reset` starts a new window.
 */
function rssSampler() {
  const peak = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     const peak = new Int32Array(workerData);
     setInterval(() => {
       const kib = Math.round(process.memoryUsage.rss() / 1024);
       if (kib > Atomics.load(peak, 0)) Atomics.store(peak, 0, kib);
     }, ${RSS_SAMPLE_MS});`,
    { eval: true, workerData: peak.buffer },
  );
  worker.unref();
  return {
    /** Starts a window at the RSS now, which it returns (bytes). */
    reset(): number {
      const rss = process.memoryUsage.rss();
      Atomics.store(peak, 0, Math.round(rss / 1024));
      return rss;
    },
    /** The highest RSS since `reset` (bytes). */
    peak: () => Math.max(Atomics.load(peak, 0) * 1024, process.memoryUsage.rss()),
    stop: () => worker.terminate(),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The monitor samples every LOOP_RESOLUTION_MS and records the time between samples, so the
 * sampling interval is subtracted: an idle loop reads ~0 ms.
 */
const loopMs = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);

/**
 * The stalls themselves, to tell the stages apart: a timer of the same resolution that fires
 * late records by how much, and when it was due. The loop was blocked then, so a stage that
 * ended before that time (the bench's code ran) ended before the stall, and one that ended
 * after it ended after the stall: the stall is counted in the stage it was due in.
 */
function stallRecorder() {
  const stalls: { at: number; ms: number }[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - LOOP_RESOLUTION_MS;
    if (late > 1) stalls.push({ at: last + LOOP_RESOLUTION_MS, ms: late });
    last = now;
  }, LOOP_RESOLUTION_MS);
  return {
    /** The longest stall due in [from, to). */
    longest: (from: number, to: number) =>
      Math.max(0, ...stalls.filter((x) => x.at >= from && x.at < to).map((x) => x.ms)),
    stop: () => clearInterval(timer),
  };
}

interface StoryState {
  status: string;
  failureReason: string | null;
  indexedChunks: number;
  totalChunks: number;
}

interface Result {
  input: string;
  uploadMs: number;
  splitMs: number;
  readyMs: number;
  story: StoryState;
  rssBase: number;
  rssPeak: number;
  loopP99: number;
  loopMax: number;
  longest: { upload: number; split: number; embed: number };
}

async function main(): Promise<void> {
  const opts = options();
  const fake = opts.embeddings === 'fake' ? await FakeOpenAiServer.start() : null;
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-bench-stories-'));
  const config = loadAppConfig({
    ...BENCH_LIMITS,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: 'silent',
    AGENT_REPLY: 'off',
    JOBS_SCHEDULER: 'false',
    DOCUMENT_MAX_PAGES: String(MAX_PAGES),
    ...(fake
      ? {
          EMBEDDINGS: 'openai',
          EMBEDDINGS_BASE_URL: fake.url,
          EMBEDDINGS_MODEL: 'fake-embed',
          EMBEDDINGS_DIMENSIONS: '512',
        }
      : {}),
  });
  const sampler = rssSampler();

  let t = performance.now();
  const book = memoir(opts.pages);
  const words = book.pages.flat().reduce((n, p) => n + p.split(' ').length, 0);
  const inputs: { input: string; fileName: string; type: string; bytes: Uint8Array }[] = [];
  if (opts.format !== 'text') {
    const bytes = await makePdf(book);
    inputs.push({ input: 'PDF', fileName: 'memoir.pdf', type: 'application/pdf', bytes });
  }
  if (opts.format !== 'pdf') {
    const bytes = makeMarkdown(book);
    inputs.push({ input: 'Markdown', fileName: 'memoir.md', type: 'text/markdown', bytes });
  }
  const generateMs = performance.now() - t;

  t = performance.now();
  const app = await createApp(config);
  const bootMs = performance.now() - t;
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const base = `http://127.0.0.1:${port}`;
    const ds = app.get(DataSource);
    const gql = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token('bench')}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
      if (body.errors?.length) throw new Error(body.errors[0].message);
      return body.data as T;
    };
    const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Rose" }) { id } }',
    );
    const upload = async (bytes: Uint8Array, fileName: string, type: string) => {
      const form = new FormData();
      form.append('file', new Blob([bytes], { type }), fileName);
      const res = await fetch(`${base}/legacies/${createLegacy.id}/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token('bench')}` },
        body: form,
      });
      const body = (await res.json()) as { id: string; status: string; pageCount: number };
      if (res.status !== 201)
        throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
      return body;
    };
    const story = (id: string) =>
      gql<{ story: StoryState }>(
        'query($id: ID!) { story(id: $id) { status failureReason indexedChunks totalChunks } }',
        { id },
      ).then((d) => d.story);
    // The index job has finished (READY is written before the job is marked done).
    const settled = async () => {
      for (;;) {
        const [row] = await ds.query(
          `SELECT count(*)::int AS n FROM jobs WHERE type = $1 AND status IN ('PENDING', 'RUNNING')`,
          [STORY_INDEX_JOB],
        );
        if (row.n === 0) return;
        await pause(POLL_MS);
      }
    };

    // Unmeasured: pdf.js and the embedder load on first use, once per process.
    const warm = await upload(
      await makePdf({ chapters: [book.chapters[0]], pages: [book.pages[0]] }),
      'warm-up.pdf',
      'application/pdf',
    );
    for (let w = await story(warm.id); w.status !== 'READY'; w = await story(warm.id)) {
      if (w.status === 'FAILED') throw new Error(`warm-up story failed: ${w.failureReason}`);
      await pause(POLL_MS);
    }
    await settled();
    const highWaterBefore = process.resourceUsage().maxRSS * 1024;

    const results: Result[] = [];
    for (const input of inputs) {
      const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
      loop.enable();
      const stalls = stallRecorder();
      // The monitor's first tick only sets its baseline: let it pass before the work starts.
      await pause(3 * LOOP_RESOLUTION_MS);
      const rssBase = sampler.reset();

      const t0 = performance.now();
      const uploaded = await upload(input.bytes, input.fileName, input.type);
      const uploadMs = performance.now() - t0;
      if (uploaded.pageCount !== (input.input === 'PDF' ? opts.pages : 1)) {
        throw new Error(`${input.input}: ${uploaded.pageCount} pages read`);
      }
      let splitMs: number | null = null;
      let state = await story(uploaded.id);
      for (;;) {
        if (splitMs === null && state.totalChunks > 0 && state.status === 'PROCESSING') {
          splitMs = performance.now() - t0;
        }
        if (state.status !== 'PROCESSING') break;
        if (performance.now() - t0 > READY_TIMEOUT_MS) {
          throw new Error(
            `${input.input}: not READY after ${READY_TIMEOUT_MS / 60_000} minutes ` +
              `(${state.indexedChunks} of ${state.totalChunks} passages indexed)`,
          );
        }
        await pause(POLL_MS);
        state = await story(uploaded.id);
      }
      const readyMs = performance.now() - t0;
      // Split and embedded between two polls: the embedding is not told apart.
      splitMs ??= readyMs;
      // And after it, so that a blocked stretch at the end is counted.
      await pause(3 * LOOP_RESOLUTION_MS);
      loop.disable();
      stalls.stop();
      const rssPeak = sampler.peak();
      if (state.status !== 'READY') {
        throw new Error(`${input.input}: ${state.status}: ${state.failureReason ?? ''}`);
      }
      results.push({
        input: input.input,
        uploadMs,
        splitMs,
        readyMs,
        story: state,
        rssBase,
        rssPeak,
        loopP99: loopMs(loop.percentile(99)),
        loopMax: loopMs(loop.max),
        longest: {
          upload: stalls.longest(t0, t0 + uploadMs),
          split: stalls.longest(t0 + uploadMs, t0 + splitMs),
          embed: stalls.longest(t0 + splitMs, Infinity),
        },
      });
      await settled();
    }

    const s = (ms: number) => (ms / 1000).toFixed(2);
    const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
    const ms = (x: number) => x.toFixed(1);
    const perS = (n: number, ms: number) => (ms > 0 ? ((n * 1000) / ms).toFixed(1) : '-');
    console.log(
      [
        `Keepsake stories benchmark: ${opts.pages} pages, ${words} words (${(words / opts.pages).toFixed(0)} a page), ` +
          `${book.chapters.filter(Boolean).length} chapters; embeddings = ` +
          (fake ? 'fake server (hashed words)' : 'local USE-lite (worker thread)'),
        `node ${process.version}, ${process.platform}/${process.arch}, embedded PGlite; ` +
          `boot ${s(bootMs)} s, inputs generated in ${s(generateMs)} s (` +
          inputs.map((i) => `${i.input} ${mb(i.bytes.byteLength)} MB`).join(', ') +
          ')',
        '',
        'time from the start of the upload (s); the upload answers once the file is read:',
        table(
          results.map((r) => ({
            input: r.input,
            'upload s': s(r.uploadMs),
            'split s': s(r.splitMs),
            'READY s': s(r.readyMs),
            'pages/s': perS(opts.pages, r.readyMs),
            passages: String(r.story.totalChunks),
            indexed: String(r.story.indexedChunks),
            'passages/s embedded': perS(r.story.totalChunks, r.readyMs - r.splitMs),
          })),
        ),
        '',
        `RSS (MB, sampled every ${RSS_SAMPLE_MS} ms) and event-loop delay of the service ` +
          '(ms, upload to READY; and the longest stall in each stage):',
        table(
          results.map((r) => ({
            input: r.input,
            'RSS before': mb(r.rssBase),
            'RSS peak': mb(r.rssPeak),
            increase: mb(r.rssPeak - r.rssBase),
            'loop p99': ms(r.loopP99),
            'loop max': ms(r.loopMax),
            'max upload': ms(r.longest.upload),
            'max split': ms(r.longest.split),
            'max embed': ms(r.longest.embed),
          })),
        ),
        '',
        `process RSS high-water mark (getrusage): ${mb(highWaterBefore)} MB before the first ` +
          `measured upload, ${mb(process.resourceUsage().maxRSS * 1024)} MB at the end`,
      ].join('\n'),
    );
    if (results.some((r) => r.story.indexedChunks !== r.story.totalChunks)) {
      console.error('a story is READY with passages not indexed');
      process.exitCode = 1;
    }
  } finally {
    await app.close();
    await fake?.close();
    await sampler.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
