/**
 * npm run bench:backup -- --data-dir DIR | --server --database NAME [--documents-mb 100] [--keep]
 *
 * A backup and a restore of a filled database, as a family and an operator make them: the
 * database of a bench:context fill (which builds --messages turns with their segments, vectors,
 * full-text statistics and summaries; fill it first, keeping it), to which this adds
 * --documents-mb of documents (files of 2.5 MB of scan-like, incompressible bytes), then
 * - embedded: the service runs (this process) and `npm run backup` (its CLI, another process)
 *   asks it through the control socket, while a probe asks the service something every 100 ms:
 *   how long requests waited while the copy held the database;
 * - server: `npm run backup` runs pg_dump (PG_BIN: the packaged server's programs) while the
 *   service runs;
 * then `npm run restore` into a new data directory (or database), whose rows it checks. Prints
 * the rows, the backup's size, each step's time and the probe's longest wait.
 *
 *   npm run bench:context -- --messages 100000 --queries 20 --data-dir /tmp/ks-100k
 *   npm run bench:backup -- --data-dir /tmp/ks-100k
 *   npm run bench:context -- --server --messages 100000 --queries 20 --database ks_100k
 *   npm run bench:backup -- --server --database ks_100k
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { StoryFormat, StoryKind, StoryVisibility } from '../src/stories/story.enums.js';
import { StoryRepository } from '../src/stories/story.repository.js';
import {
  benchConfig,
  benchDatabase,
  benchServerUrl,
  JWT_SECRET,
  table,
  token,
  wholeArg,
} from './support.js';

const exec = promisify(execFile);
const DOCUMENT_BYTES = 2.5 * 1024 * 1024;
const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
const seconds = (ms: number) => (ms / 1000).toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      database: { type: 'string' },
      server: { type: 'boolean', default: false },
      'documents-mb': { type: 'string', default: '100' },
      keep: { type: 'boolean', default: false },
    },
  });
  const serverUrl = benchServerUrl(values.server || values.database !== undefined);
  if (!values['data-dir'] && !(serverUrl && values.database)) {
    throw new Error('Give --data-dir DIR or --server --database NAME of a bench:context fill.');
  }
  const documentsMb = wholeArg('documents-mb', values['documents-mb']!, 0);
  const server = serverUrl ? await benchDatabase(serverUrl, values.database) : null;
  const dataDir = values['data-dir'] ?? mkdtempSync(join(tmpdir(), 'keepsake-bench-backup-'));
  const config = benchConfig(dataDir, server, {
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
    MEMBER_STORAGE_MAX_BYTES: String(64 * 1024 * 1024 * 1024),
  });
  const pgBin = server
    ? execFileSync('bash', ['test/support/postgres.sh', 'bin'], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .pop()!
    : '';
  const app = await createApp(config);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${port}/graphql`;
  const bearer = token('bench-backup');
  const ask = async (query: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query }),
    });
    return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  };
  const restoredDir = mkdtempSync(join(tmpdir(), 'keepsake-bench-restored-'));
  rmSync(restoredDir, { recursive: true });
  const restoredDb = server
    ? await benchDatabase(serverUrl!, `${values.database}_restored_${process.pid}`)
    : null;
  const file = join(tmpdir(), `keepsake-bench-${process.pid}.tar.gz`);
  try {
    // ---- documents, once per database ------------------------------------------------------
    const ds = app.get(DataSource);
    const [{ bytes, turns }] = (await ds.query(
      `SELECT (SELECT coalesce(sum(octet_length(content)), 0)::bigint FROM story_files) AS bytes,
              (SELECT count(*)::int FROM messages) AS turns`,
    )) as { bytes: string; turns: number }[];
    const [legacy] = (await ds.query(
      `SELECT l.id, l.created_by AS owner FROM legacies l ORDER BY l.created_at LIMIT 1`,
    )) as { id: string; owner: string }[];
    if (!legacy) throw new Error('The database holds no legacy: fill it with bench:context first.');
    const stories = app.get(StoryRepository);
    let stored = Number(bytes);
    for (let i = 0; stored < documentsMb * 1024 * 1024; i++) {
      await ds.transaction(async (m) => {
        const row = await stories.insert(m, {
          legacyId: legacy.id,
          authorId: legacy.owner,
          title: `Scan ${i}`,
          kind: StoryKind.DOCUMENT,
          format: StoryFormat.PDF,
          visibility: StoryVisibility.PRIVATE,
          pages: [{ number: 1, text: `Scan ${i}` }],
          sizeBytes: DOCUMENT_BYTES,
          fileName: `scan-${i}.pdf`,
          mimeType: 'application/pdf',
          occurredAt: null,
        });
        await stories.saveFile(m, row.id, randomBytes(DOCUMENT_BYTES));
      });
      stored += DOCUMENT_BYTES;
    }
    console.log(`${turns} turns, ${mb(stored)} MB of documents`);

    // ---- the backup, while the service runs and answers ------------------------------------
    let probing = true;
    let slowest = 0;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        await ask('{ me { id } }');
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      JWT_SECRET,
      ...(server ? { DATABASE_URL: server.url, PG_BIN: pgBin } : {}),
    };
    const backupStarted = performance.now();
    const made = await exec(process.execPath, ['dist/src/backups/cli/backup.js', '--out', file], {
      env,
    });
    const backupMs = performance.now() - backupStarted;
    probing = false;
    await probe;
    process.stdout.write(made.stdout);

    // ---- the restore -----------------------------------------------------------------------
    const restoreStarted = performance.now();
    const restored = await exec(
      process.execPath,
      [
        'dist/src/backups/cli/restore.js',
        file,
        ...(restoredDb ? ['--database-url', restoredDb.url] : ['--data-dir', restoredDir]),
      ],
      { env: { ...process.env, ...(server ? { PG_BIN: pgBin } : {}) } },
    );
    const restoreMs = performance.now() - restoreStarted;
    process.stdout.write(restored.stdout);
    const rows = [
      {
        database: server ? 'server' : 'embedded',
        turns: String(turns),
        'documents MB': mb(stored),
        'backup MB': mb(statSync(file).size),
        'backup s': seconds(backupMs),
        'longest request wait during it, ms': String(Math.round(slowest)),
        'restore s': seconds(restoreMs),
      },
    ];
    console.log(table(rows));
  } finally {
    await app.close();
    rmSync(file, { force: true });
    if (!values.keep) {
      rmSync(restoredDir, { recursive: true, force: true });
      await restoredDb?.drop();
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
