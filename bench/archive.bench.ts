/**
 * npm run bench:archive -- [--turns 10000] [--documents-mb 100] [--server] [--keep]
 *
 * A legacy archive's export and import: the real application (its job worker off: each job is
 * run here, measured alone) on a fresh embedded database, or with --server (or DATABASE_URL) on
 * a PostgreSQL server in a database of its own, where archives are kept in the database
 * (ARCHIVE_STORE=auto). One member's legacy is filled with --turns turns (imported conversations
 * of 500 turns, a sentence or three each, said over two years), --documents-mb of documents
 * (files of 2.5 MB of incompressible bytes, as scans are, each with 20 pages of text), 100
 * facts and 100 memories. Then, each timed: the export job (the ZIP written and put in the
 * store), its download over HTTP, its upload over HTTP (checked whole), and the import job (the
 * new legacy whole; its indexing, which the usual jobs do afterwards, is not counted); the
 * download and the upload are made by another process (curl). For each:
 * seconds, MB/s of the ZIP, the process's peak RSS (sampled every 50 ms by a thread of its own)
 * and its rise over the RSS before the step: bounded memory shows as a rise that does not grow
 * with the archive. --keep leaves the data directory (or server database) for a look.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { ArchivesService } from '../src/archives/archives.service.js';
import { StoryFormat, StoryKind, StoryVisibility } from '../src/stories/story.enums.js';
import { StoryRepository } from '../src/stories/story.repository.js';
import {
  benchConfig,
  benchDatabase,
  benchServerUrl,
  rng,
  table,
  token,
  wholeArg,
} from './support.js';

const TURNS_PER_CONVERSATION = 500;
const DOCUMENT_BYTES = 2.5 * 1024 * 1024;
const PAGES_PER_DOCUMENT = 20;
const RSS_SAMPLE_MS = 50;
const execFileAsync = promisify(execFile);

const WORDS = `garden tomatoes greenhouse lighthouse harbour letters attic recipe bicycle
  workshop sunday market orchard fishing boat church choir wedding winter summer school
  teacher brother sister cousin village river bridge kitchen bread apples tea radio war
  factory train station holiday seaside photograph birthday dance accordion`.split(/\s+/);

function options() {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '10000' },
      'documents-mb': { type: 'string', default: '100' },
      server: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  });
  return {
    turns: wholeArg('turns', values.turns, 1),
    documentsMb: wholeArg('documents-mb', values['documents-mb'], 0),
    serverUrl: benchServerUrl(values.server),
    keep: values.keep,
  };
}

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
  // This thread's own JS heap and buffers, sampled on its event loop: what the service holds,
  // apart from the embedded database's thread (its WebAssembly memory counts in RSS only).
  let heapPeak = 0;
  const heap = () => {
    const m = process.memoryUsage();
    heapPeak = Math.max(heapPeak, m.heapUsed + m.external);
  };
  const heapTimer = setInterval(heap, RSS_SAMPLE_MS);
  heapTimer.unref();
  return {
    reset(): number {
      const rss = process.memoryUsage.rss();
      Atomics.store(peak, 0, Math.round(rss / 1024));
      heapPeak = 0;
      heap();
      return rss;
    },
    peak: () => Math.max(Atomics.load(peak, 0) * 1024, process.memoryUsage.rss()),
    heapPeak: () => {
      heap();
      return heapPeak;
    },
    stop: () => {
      clearInterval(heapTimer);
      return worker.terminate();
    },
  };
}

const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);

async function main(): Promise<void> {
  const opts = options();
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-bench-archive-'));
  const server = opts.serverUrl ? await benchDatabase(opts.serverUrl) : null;
  const config = benchConfig(dataDir, server, {
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
    CONVERSATIONS_PER_USER_PER_DAY: '1000000',
    IMPORTS_PER_USER_PER_HOUR: '1000000',
    // A member keeps at most 1 GB of documents in a legacy by default: the bench may ask more.
    MEMBER_STORAGE_MAX_BYTES: String(8 * 1024 * 1024 * 1024),
    ARCHIVE_IMPORT_MAX_BYTES: '16gb',
    ARCHIVE_IMPORT_MAX_UNZIPPED_BYTES: '16gb',
  });
  const app = await createApp(config);
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${token('bench-archive-owner')}` };
  const gql = async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data!;
  };
  const archives = app.get(ArchivesService);
  const rss = rssSampler();
  const rows: Record<string, string>[] = [];
  try {
    // ---- the legacy -------------------------------------------------------------------
    const seedStarted = performance.now();
    const legacyId = (
      await gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Joe", description: "He fixed every bicycle in the village." }) { id } }',
      )
    ).createLegacy.id;
    const random = rng(37);
    const sentence = () =>
      Array.from(
        { length: 8 + Math.floor(random() * 20) },
        () => WORDS[Math.floor(random() * WORDS.length)],
      ).join(' ') + '.';
    const start = Date.parse('2024-01-01T00:00:00Z');
    const span = 2 * 365 * 24 * 3600 * 1000;
    for (let done = 0; done < opts.turns; done += TURNS_PER_CONVERSATION) {
      const n = Math.min(TURNS_PER_CONVERSATION, opts.turns - done);
      const from = start + (span * done) / opts.turns;
      const messages = Array.from({ length: n }, (_, i) => ({
        role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
        content: Array.from({ length: 1 + Math.floor(random() * 3) }, sentence).join(' '),
        occurredAt: new Date(from + i * 60_000).toISOString(),
      }));
      await gql(
        'mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }',
        {
          input: { legacyId, title: `Conversation ${done / TURNS_PER_CONVERSATION + 1}`, messages },
        },
      );
    }
    for (let i = 0; i < 100; i++) {
      await gql(
        'mutation($l: ID!, $c: String!) { addFact(input: { legacyId: $l, content: $c, category: OTHER, visibility: SHARED }) { id } }',
        { l: legacyId, c: `Fact ${i}: ${sentence()}` },
      );
    }
    await gql('mutation($json: String!) { importMemories(json: $json) { importedCount } }', {
      json: JSON.stringify({
        memories: Array.from({ length: 100 }, (_, i) => ({
          content: `Memory ${i}: ${sentence()}`,
          type: 'FACT',
          legacyId,
        })),
      }),
    });
    // Documents straight through the stories' repository: 2.5 MB of scan-like bytes each.
    const ds = app.get(DataSource);
    const stories = app.get(StoryRepository);
    const ownerId = (await gql<{ me: { id: string } }>('{ me { id } }')).me.id;
    const documents = Math.ceil((opts.documentsMb * 1024 * 1024) / DOCUMENT_BYTES);
    for (let i = 0; i < documents; i++) {
      const pages = Array.from({ length: PAGES_PER_DOCUMENT }, (_, p) => ({
        number: p + 1,
        text: Array.from({ length: 12 }, sentence).join(' '),
      }));
      const bytes = randomBytes(DOCUMENT_BYTES);
      await ds.transaction(async (m) => {
        const row = await stories.insert(m, {
          legacyId,
          authorId: ownerId,
          title: `Scanned letters ${i + 1}`,
          kind: StoryKind.DOCUMENT,
          format: StoryFormat.PDF,
          visibility: StoryVisibility.SHARED,
          pages,
          sizeBytes: bytes.byteLength,
          fileName: `letters-${i + 1}.pdf`,
          mimeType: 'application/pdf',
          occurredAt: null,
        });
        await stories.saveFile(m, row.id, bytes);
      });
    }
    const seeded = (performance.now() - seedStarted) / 1000;

    // ---- export --------------------------------------------------------------------------
    const measure = async <T>(step: string, run: () => Promise<T>, bytes: () => number) => {
      const before = rss.reset();
      const started = performance.now();
      const result = await run();
      const seconds = (performance.now() - started) / 1000;
      const peak = rss.peak();
      rows.push({
        step,
        seconds: seconds.toFixed(1),
        'ZIP MB/s': (Number(mb(bytes())) / seconds).toFixed(1),
        'peak RSS MB': mb(peak),
        'RSS rise MB': mb(Math.max(0, peak - before)),
        'peak heap+buffers MB': mb(rss.heapPeak()),
      });
      return result;
    };
    const asked = await gql<{ exportLegacyArchive: { id: string } }>(
      'mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { id } }',
      { l: legacyId },
    );
    const exportId = asked.exportLegacyArchive.id;
    let zipBytes = 0;
    await measure(
      'export (job)',
      async () => {
        await archives.runExport(exportId);
        const done = await gql<{
          legacyArchive: { status: string; sizeBytes: number; failureReason: string | null };
        }>('query($id: ID!) { legacyArchive(id: $id) { status sizeBytes failureReason } }', {
          id: exportId,
        });
        if (done.legacyArchive.status !== 'COMPLETED') throw new Error(JSON.stringify(done));
        zipBytes = done.legacyArchive.sizeBytes;
      },
      () => zipBytes,
    );
    const zipPath = join(dataDir, 'downloaded.zip');
    await measure(
      'download (HTTP)',
      async () => {
        const { stdout } = await execFileAsync('curl', [
          '-sS',
          '-o',
          zipPath,
          '-w',
          '%{http_code}',
          '-H',
          `authorization: ${auth.authorization}`,
          `${base}/archives/${exportId}/file`,
        ]);
        if (stdout.trim() !== '200') throw new Error(`download ${stdout}`);
      },
      () => statSync(zipPath).size,
    );

    // ---- import --------------------------------------------------------------------------
    let uploadId = '';
    await measure(
      'upload (HTTP, checked)',
      async () => {
        // Sent by curl, another process: this one's memory is the service's alone.
        const { stdout } = await execFileAsync('curl', [
          '-sS',
          '-w',
          '\n%{http_code}',
          '-H',
          `authorization: ${auth.authorization}`,
          '-F',
          `file=@${zipPath};type=application/zip`,
          `${base}/archives`,
        ]);
        const [body, status] = stdout.trim().split('\n');
        if (status !== '201') throw new Error(`upload ${status} ${body}`);
        uploadId = (JSON.parse(body) as { id: string }).id;
      },
      () => zipBytes,
    );
    await gql('mutation($id: ID!) { importLegacyArchive(id: $id) { id } }', { id: uploadId });
    let importedLegacy = '';
    await measure(
      'import (job)',
      async () => {
        await archives.runImport(uploadId);
        const done = await gql<{
          legacyArchive: { status: string; legacyId: string; failureReason: string | null };
        }>('query($id: ID!) { legacyArchive(id: $id) { status legacyId failureReason } }', {
          id: uploadId,
        });
        if (done.legacyArchive.status !== 'COMPLETED') throw new Error(JSON.stringify(done));
        importedLegacy = done.legacyArchive.legacyId;
      },
      () => zipBytes,
    );
    const [counts] = await ds.query(
      `SELECT (SELECT count(*)::int FROM messages WHERE legacy_id = $1) AS turns,
              (SELECT count(*)::int FROM stories WHERE legacy_id = $1) AS stories,
              (SELECT coalesce(sum(size_bytes), 0)::bigint AS b FROM stories WHERE legacy_id = $1) AS bytes`,
      [importedLegacy],
    );
    console.log(
      [
        `bench:archive: ${opts.turns} turns, ${documents} documents (${mb(documents * DOCUMENT_BYTES)} MB), 100 facts, 100 memories`,
        `  database   ${server ? 'PostgreSQL server (DATABASE_URL); archives stored in the database' : `embedded PGlite in ${dataDir}; archives stored in a directory`}`,
        `  seeded in  ${seeded.toFixed(1)} s`,
        `  archive    ${mb(zipBytes)} MB ZIP`,
        `  imported   ${counts.turns} turns, ${counts.stories} documents (${mb(Number(counts.bytes))} MB)`,
        '',
        table(rows),
      ].join('\n'),
    );
    if (counts.turns !== opts.turns || counts.stories !== documents) {
      throw new Error('the imported legacy is not whole');
    }
  } finally {
    await rss.stop();
    await app.close();
    if (!opts.keep) {
      rmSync(dataDir, { recursive: true, force: true });
      await server?.drop();
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
