import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import { DataSource } from 'typeorm';
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BackupManifest,
  COUNTS_SQL,
  copyHashed,
  hashFile,
  listFiles,
} from './backup-bundle.js';

const run = promisify(execFile);

/** Files of the embedded database that describe the process that had it open, not the data. */
const NOT_DATA = new Set(['postmaster.pid', 'postmaster.opts']);

/** What was read inside the snapshot for the manifest. */
async function describe(
  query: (sql: string) => Promise<Record<string, unknown>[]>,
): Promise<Pick<BackupManifest, 'postgres' | 'lastMigration' | 'counts'>> {
  const [version] = await query(`SELECT current_setting('server_version') AS v`);
  const [migration] = await query(
    `SELECT name FROM typeorm_migrations ORDER BY timestamp DESC LIMIT 1`,
  );
  const [counts] = await query(COUNTS_SQL);
  return {
    postgres: String(version.v),
    lastMigration: migration ? String(migration.name) : null,
    counts: Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)])),
  };
}

function manifestOf(
  database: BackupManifest['database'],
  read: Pick<BackupManifest, 'postgres' | 'lastMigration' | 'counts'>,
  files: BackupManifest['files'],
  directories: string[],
  keepsake: string,
): BackupManifest {
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    createdAt: new Date().toISOString(),
    database,
    keepsake,
    ...read,
    files,
    directories,
  };
}

/**
 * A consistent copy of the embedded database into `staging`, taken while the service runs: the
 * one connection is held (requests wait, for as long as the copy takes, a second or so per GB),
 * a CHECKPOINT writes every change to the data files, and the directory is copied as it stands,
 * with the token secret. What it holds then opens as the database did at that moment.
 */
export async function snapshotEmbedded(
  dataSource: DataSource,
  dataDir: string,
  staging: string,
  keepsake: string,
): Promise<BackupManifest> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const read = await describe((sql) => runner.query(sql) as Promise<Record<string, unknown>[]>);
    await runner.query('CHECKPOINT');
    const files: BackupManifest['files'] = [];
    const pgDir = join(dataDir, 'pg');
    const directories = ['pg', ...(await listFiles(pgDir, 'directory')).map((d) => `pg/${d}`)];
    for (const dir of directories) await mkdir(join(staging, dir), { recursive: true });
    for (const path of await listFiles(pgDir)) {
      if (NOT_DATA.has(path)) continue;
      files.push({
        path: `pg/${path}`,
        ...(await copyHashed(join(pgDir, path), join(staging, 'pg', path))),
      });
    }
    const secret = join(dataDir, 'jwt-secret');
    if (existsSync(secret)) {
      files.push({
        path: 'jwt-secret',
        ...(await copyHashed(secret, join(staging, 'jwt-secret'))),
      });
    }
    return manifestOf('embedded', read, files, directories, keepsake);
  } finally {
    await runner.release();
  }
}

/** Where PostgreSQL's client programs are: PG_BIN, or the PATH. */
export function pgProgram(name: string): string {
  const dir = process.env.PG_BIN;
  return dir ? join(dir, name) : name;
}

/**
 * Runs one of PostgreSQL's client programs against `databaseUrl`, given through libpq's
 * variables rather than the command line (where a password would show in the process list).
 */
export async function runPgProgram(
  name: string,
  args: string[],
  databaseUrl: string,
): Promise<void> {
  const c = parseConnectionString(databaseUrl);
  const env: NodeJS.ProcessEnv = { ...process.env };
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '') env[key] = String(value);
  };
  set('PGHOST', c.host);
  set('PGPORT', c.port);
  set('PGUSER', c.user);
  set('PGPASSWORD', c.password);
  set('PGDATABASE', c.database);
  const params = new URL(databaseUrl.replace(/^postgres(ql)?:/, 'http:')).searchParams;
  set('PGSSLMODE', params.get('sslmode'));
  set('PGSSLROOTCERT', params.get('sslrootcert'));
  try {
    await run(pgProgram(name), args, { env, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message: string };
    throw new Error(
      e.code === 'ENOENT'
        ? `${name} was not found: install PostgreSQL's client programs (as new as the server) or set PG_BIN to their folder.`
        : `${name} failed: ${(e.stderr ?? e.message).trim()}`,
      { cause: err },
    );
  }
}

/**
 * A server's database as a pg_dump archive (custom format) in `staging`, taken in the same
 * snapshot as the counts the manifest keeps: pg_dump reads one consistent moment while
 * clients go on writing, and never blocks them. pg_dump must be as new as the server.
 */
export async function dumpServer(
  databaseUrl: string,
  staging: string,
  keepsake: string,
): Promise<BackupManifest> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const [{ snapshot }] = (await client.query('SELECT pg_export_snapshot() AS snapshot')).rows as {
      snapshot: string;
    }[];
    const read = await describe(async (sql) => (await client.query(sql)).rows);
    const file = join(staging, 'database.dump');
    await runPgProgram(
      'pg_dump',
      [
        '--format=custom',
        '--no-owner',
        '--no-privileges',
        `--snapshot=${snapshot}`,
        '--file',
        file,
      ],
      databaseUrl,
    );
    await client.query('COMMIT');
    return manifestOf(
      'server',
      read,
      [{ path: 'database.dump', ...(await hashFile(file)) }],
      [],
      keepsake,
    );
  } finally {
    await client.end();
  }
}
