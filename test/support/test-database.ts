import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import pg from 'pg';
import { loadAppConfig } from '../../src/app.config.js';
import { openDataSource } from '../../src/database/database.module.js';
import { openEmbeddedPostgres } from '../../src/database/embedded-postgres.js';

/** This run's directory, set by the global setup (a run of its own when a file runs alone). */
export const TEST_DB_ROOT = resolve(
  process.env.KEEPSAKE_TEST_DB_ROOT ?? join('.test-dbs', `run-${process.ppid}`),
);
const TEMPLATE_DIR = join(TEST_DB_ROOT, 'template');
const BUILDING = join(TEST_DB_ROOT, 'template.building');
const READY = join(TEST_DB_ROOT, 'template.ready');

/**
 * A real PostgreSQL server for the whole suite (`TEST_DATABASE_URL`), or unset for the embedded
 * database. On a server each test file gets `CREATE DATABASE ... TEMPLATE` of one migrated
 * template, named after this run so that the global teardown can drop them all.
 */
export const TEST_SERVER_URL = process.env.TEST_DATABASE_URL || undefined;
export const ON_SERVER = TEST_SERVER_URL !== undefined;
export const RUN_PREFIX = `ks_${basename(TEST_DB_ROOT).replace(/\D/g, '')}_`;
const TEMPLATE_DB = `${RUN_PREFIX}template`;

export interface TestDatabase {
  /** The embedded database's directory; on a server, a scratch directory beside no database. */
  dataDir: string;
  /** On a server: this file's own database. */
  databaseUrl?: string;
  /** The variables that point the service at this database. */
  env: Record<string, string>;
  remove: () => Promise<void>;
}

export function serverDatabaseUrl(name: string): string {
  const url = new URL(TEST_SERVER_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

async function onMaintenanceDb<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverDatabaseUrl('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function dropServerDatabase(name: string): Promise<void> {
  await onMaintenanceDb((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/**
 * The run's migrated template, embedded or on the server: made by Jest's global setup before
 * the workers start when a fresh build is at hand (test/support/global-setup.mjs), otherwise by
 * the first test file to need it while the others wait. mkdir is atomic, so exactly one builds it.
 */
export async function ensureTemplate(embedded: boolean): Promise<void> {
  const ready = embedded ? READY : `${READY}.server`;
  if (existsSync(ready)) return;
  mkdirSync(TEST_DB_ROOT, { recursive: true });
  let builder = false;
  try {
    mkdirSync(embedded ? BUILDING : `${BUILDING}.server`);
    builder = true;
  } catch {
    // another worker is building it
  }
  if (builder) {
    if (embedded) {
      const config = loadAppConfig({ DATA_DIR: TEMPLATE_DIR, JWT_SECRET: 'x'.repeat(32) });
      const db = await openEmbeddedPostgres(TEMPLATE_DIR);
      const ds = await openDataSource(config, db);
      await ds.destroy();
      await db.close();
    } else {
      await dropServerDatabase(TEMPLATE_DB);
      await onMaintenanceDb((c) => c.query(`CREATE DATABASE "${TEMPLATE_DB}"`));
      const config = loadAppConfig({
        DATABASE_URL: serverDatabaseUrl(TEMPLATE_DB),
        JWT_SECRET: 'x'.repeat(32),
      });
      const ds = await openDataSource(config, null);
      await ds.destroy();
    }
    writeFileSync(ready, 'ok');
    return;
  }
  const deadline = Date.now() + 120_000;
  while (!existsSync(ready)) {
    if (Date.now() > deadline) throw new Error('Timed out waiting for the template database.');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function copyServerTemplate(name: string): Promise<void> {
  // Two copies of one template at the same moment can find it "being accessed": try again.
  for (let attempt = 0; ; attempt++) {
    try {
      await onMaintenanceDb((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`));
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
}

/**
 * A private, already-migrated database for one test file: on the server when the suite runs
 * there, unless `embedded` asks for the embedded database (tests of DATA_DIR itself).
 */
export async function createTestDatabase(
  options: { embedded?: boolean } = {},
): Promise<TestDatabase> {
  const embedded = options.embedded === true || !ON_SERVER;
  await ensureTemplate(embedded);
  const id = `${process.pid}_${randomUUID().slice(0, 8)}`;
  const dataDir = join(TEST_DB_ROOT, `db-${id}`);
  if (embedded) {
    cpSync(TEMPLATE_DIR, dataDir, { recursive: true });
    return {
      dataDir,
      env: { DATA_DIR: dataDir },
      remove: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `${RUN_PREFIX}${id}`;
  await copyServerTemplate(name);
  mkdirSync(dataDir, { recursive: true });
  const databaseUrl = serverDatabaseUrl(name);
  return {
    dataDir,
    databaseUrl,
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    remove: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await dropServerDatabase(name);
    },
  };
}

/** The database that `env` already points at (a restart on the same data), as a TestDatabase. */
export function existingTestDatabase(env: Record<string, string>): TestDatabase {
  const dataDir = env.DATA_DIR;
  const url = env.DATABASE_URL;
  return {
    dataDir,
    databaseUrl: url,
    env: url ? { DATA_DIR: dataDir, DATABASE_URL: url } : { DATA_DIR: dataDir },
    remove: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      if (url) await dropServerDatabase(new URL(url).pathname.slice(1));
    },
  };
}
