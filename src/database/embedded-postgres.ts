import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGliteThread } from './pglite-thread.js';

export class DataDirLockedError extends Error {}

const LOCK_FILE = 'keepsake.lock';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Nothing in PGlite stops two processes from opening one directory (which corrupts it), so we
 * keep a lock file holding our pid. A lock left by a dead process is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const lockPath = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(lockPath, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (
        Number.isInteger(holder) &&
        holder > 0 &&
        holder !== process.pid &&
        processAlive(holder)
      ) {
        throw new DataDirLockedError(
          `The data directory ${dir} is in use by another Keepsake process (pid ${holder}). ` +
            'Stop it first, or set DATA_DIR to another directory.',
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock the data directory ${dir}.`);
}

export interface EmbeddedPostgres {
  /** What `pg` connects with (TypeORM's `extra`). */
  pgConfig: object;
  close(): Promise<void>;
}

/** Where the embedded database runs: a thread of its own, or the service's own thread. */
export type EmbeddedThread = 'worker' | 'main';

/** PGlite in this thread: each statement runs synchronously on the event loop. */
async function inThisThread(
  pgDir: string,
): Promise<Omit<EmbeddedPostgres, 'close'> & { end(): Promise<void> }> {
  const db = await PGlite.create({ dataDir: pgDir, extensions: { vector, pg_trgm } });
  return { pgConfig: createPgConfig(db), end: () => db.close() };
}

/** PGlite in a worker thread, reached through the wire protocol. */
async function inAThread(
  pgDir: string,
): Promise<Omit<EmbeddedPostgres, 'close'> & { end(): Promise<void> }> {
  const thread = await PGliteThread.start(pgDir);
  return { pgConfig: { stream: () => thread.stream() }, end: () => thread.close() };
}

/** Opens (creating if needed) the embedded PostgreSQL with pgvector and pg_trgm, under a lock. */
export async function openEmbeddedPostgres(
  dataDir: string,
  where: EmbeddedThread = 'worker',
): Promise<EmbeddedPostgres> {
  const release = lockDataDir(dataDir);
  const pgDir = join(resolve(dataDir), 'pg');
  try {
    const { pgConfig, end } = await (where === 'worker' ? inAThread(pgDir) : inThisThread(pgDir));
    let closed = false;
    return {
      pgConfig,
      async close() {
        if (closed) return;
        closed = true;
        try {
          await end();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
