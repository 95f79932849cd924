import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppConfig } from '../../src/config/app-config.js';
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
 * The first test file to need a database migrates one template for the run; the others wait
 * for it. mkdir is atomic, so exactly one worker builds it.
 */
async function ensureTemplate(): Promise<void> {
  if (existsSync(READY)) return;
  mkdirSync(TEST_DB_ROOT, { recursive: true });
  let builder = false;
  try {
    mkdirSync(BUILDING);
    builder = true;
  } catch {
    // another worker is building it
  }
  if (builder) {
    const config = AppConfig.load({ DATA_DIR: TEMPLATE_DIR, JWT_SECRET: 'x'.repeat(32) });
    const embedded = await openEmbeddedPostgres(TEMPLATE_DIR);
    const ds = await openDataSource(config, embedded);
    await ds.destroy();
    await embedded.close();
    writeFileSync(READY, 'ok');
    return;
  }
  const deadline = Date.now() + 120_000;
  while (!existsSync(READY)) {
    if (Date.now() > deadline) throw new Error('Timed out waiting for the template database.');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A private, already-migrated embedded database for one test file. */
export async function createTestDatabase(): Promise<{ dataDir: string; remove: () => void }> {
  await ensureTemplate();
  const dataDir = join(TEST_DB_ROOT, `db-${process.pid}-${randomUUID().slice(0, 8)}`);
  cpSync(TEMPLATE_DIR, dataDir, { recursive: true });
  return { dataDir, remove: () => rmSync(dataDir, { recursive: true, force: true }) };
}
