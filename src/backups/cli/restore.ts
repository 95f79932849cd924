/**
 * npm run restore -- FILE --data-dir DIR        (a backup of the embedded database)
 * npm run restore -- FILE --database-url URL    (a backup of a server, into an empty database)
 *
 * Brings back a backup made by `npm run backup` (or a scheduled one): checks every file against
 * its manifest, refuses a data directory that is not empty (or a database that has tables), and
 * checks the restored database's rows against the counts taken with the backup. Start the
 * service on it as usual (DATA_DIR=DIR, or DATABASE_URL=URL): it migrates a backup made by an
 * older version at boot.
 */
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import { DataSource } from 'typeorm';
import { loadAppConfig } from '../../app.config.js';
import { dataSourceOptions } from '../../database/data-source-options.js';
import { openEmbeddedPostgres } from '../../database/embedded-postgres.js';
import { BackupManifest, BundleError, COUNTS_SQL, extractBundle } from '../backup-bundle.js';
import { runPgProgram } from '../backup-sources.js';
import { JobRepository } from '../../jobs/job.repository.js';
import { keepNewFilesPrivate } from '../../common/files/private-files.js';

const USAGE = 'Usage: npm run restore -- FILE --data-dir DIR | --database-url URL';

class RefusedError extends Error {}

async function counted(query: (sql: string) => Promise<Record<string, unknown>[]>) {
  const [row] = await query(COUNTS_SQL);
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

function sameCounts(manifest: BackupManifest, found: Record<string, number>): void {
  const differ = Object.entries(manifest.counts).filter(([table, n]) => found[table] !== n);
  if (differ.length > 0) {
    throw new Error(
      `the restored database differs from the backup: ${differ.map(([t, n]) => `${t} ${found[t]} instead of ${n}`).join(', ')}`,
    );
  }
}

async function intoDataDir(file: string, dir: string): Promise<BackupManifest> {
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new RefusedError(`${dir} is not empty: restore into a new data directory.`);
  }
  const staging = `${dir}.restoring-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    const manifest = await extractBundle(file, staging);
    if (manifest.database !== 'embedded') {
      throw new RefusedError(`${file} is a backup of a server: restore it with --database-url.`);
    }
    await mkdir(dir, { recursive: true });
    // The database last: a directory with pg/ in it is a whole restore.
    if (existsSync(join(staging, 'jwt-secret'))) {
      await rename(join(staging, 'jwt-secret'), join(dir, 'jwt-secret'));
    }
    await rename(join(staging, 'pg'), join(dir, 'pg'));
    const config = loadAppConfig({
      DATA_DIR: dir,
      JWT_SECRET: 'x'.repeat(32),
      LOG_LEVEL: 'silent',
    });
    const db = await openEmbeddedPostgres(dir, 'main');
    const ds = new DataSource(dataSourceOptions(config, db.pgConfig));
    try {
      await ds.initialize();
      sameCounts(manifest, await counted((sql) => ds.query(sql)));
    } finally {
      if (ds.isInitialized) await ds.destroy();
      await db.close();
    }
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Jobs that were running when the backup was taken belong to workers that are not there for the
 * restored database: handed back now (merged with a waiting twin, as at a crash) rather than
 * after their lease. The embedded database does this at every boot.
 */
async function handBackJobs(url: string): Promise<void> {
  const config = loadAppConfig({
    DATABASE_URL: url,
    JWT_SECRET: 'x'.repeat(32),
    LOG_LEVEL: 'silent',
  });
  const ds = new DataSource(dataSourceOptions(config));
  try {
    await ds.initialize();
    await new JobRepository(ds).requeueInterrupted('all');
  } finally {
    if (ds.isInitialized) await ds.destroy();
  }
}

async function intoServer(file: string, url: string): Promise<BackupManifest> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [{ n }] = (
      await client.query(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
      )
    ).rows as { n: number }[];
    if (n > 0) throw new RefusedError('that database has tables: restore into an empty database.');
    const staging = join(resolve('.'), `.restore-${process.pid}`);
    try {
      const manifest = await extractBundle(file, staging);
      if (manifest.database !== 'server') {
        throw new RefusedError(
          `${file} is a backup of the embedded database: restore it with --data-dir.`,
        );
      }
      // The connection comes through libpq's variables; --dbname makes it restore, not print.
      const database = parseConnectionString(url).database ?? 'postgres';
      await runPgProgram(
        'pg_restore',
        [
          '--no-owner',
          '--no-privileges',
          '--exit-on-error',
          '--single-transaction',
          '--dbname',
          database,
          join(staging, 'database.dump'),
        ],
        url,
      );
      sameCounts(manifest, await counted(async (sql) => (await client.query(sql)).rows));
      await handBackJobs(url);
      return manifest;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  // What it writes (the restored database, the secret) is the service user's alone.
  keepNewFilesPrivate();
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, 'database-url': { type: 'string' } },
  });
  const [file] = positionals;
  const dataDir = values['data-dir'];
  const url = values['database-url'];
  if (!file || positionals.length > 1 || !dataDir === !url) {
    console.error(USAGE);
    return 2;
  }
  const started = performance.now();
  try {
    const manifest = dataDir
      ? await intoDataDir(resolve(file), resolve(dataDir))
      : await intoServer(resolve(file), url!);
    const c = manifest.counts;
    console.log(
      `Restored the backup of ${manifest.createdAt} into ${dataDir ? resolve(dataDir) : 'the database'} ` +
        `in ${((performance.now() - started) / 1000).toFixed(1)} s: ${c.legacies} legacies, ${c.conversations} conversations, ` +
        `${c.messages} turns, ${c.facts} facts, ${c.memories} memories, ${c.stories} stories, all checked. ` +
        `Start Keepsake with ${dataDir ? `DATA_DIR=${resolve(dataDir)}` : 'DATABASE_URL pointing at it'}.`,
    );
    return 0;
  } catch (err) {
    const refused = err instanceof RefusedError || err instanceof BundleError;
    console.error(`${refused ? 'Not restored' : 'The restore failed'}: ${(err as Error).message}`);
    return refused ? 2 : 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
