import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { vector } from '@electric-sql/pglite-pgvector';
import { Logger } from '@nestjs/common';
import {
  keepNewFilesPrivate,
  securePrivateDir,
  tighteningNotice,
} from '../common/files/private-files.js';
import { PGliteThread } from './pglite-thread.js';
import { PrivateNodeFS } from './private-node-fs.mjs';

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
 * When a process started (clock ticks since boot, from /proc on Linux; null elsewhere): a pid
 * alone does not tell a live holder from a new process that was given a dead holder's pid.
 */
export function processStart(pid: number | 'self'): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces and parentheses, so count after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the lock's holder still runs: its pid is alive and, where known, started when it did. */
function holderAlive(holder: number, start: string | undefined): boolean {
  if (!Number.isInteger(holder) || holder <= 0 || holder === process.pid) return false;
  if (!processAlive(holder)) return false;
  const now = start ? processStart(holder) : null;
  return now === null || now === start;
}

/** The pid of the live process holding the data directory's lock, or null when none does. */
export function lockHolder(dataDir: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(resolve(dataDir), LOCK_FILE), 'utf8');
  } catch {
    return null;
  }
  const [pid, start] = text.trim().split(' ');
  return holderAlive(Number(pid), start) ? Number(pid) : null;
}

/**
 * Nothing in PGlite stops two processes from opening one directory (which corrupts it), so we
 * keep a lock file holding our pid and start time. A lock left by a dead process (or one whose
 * pid another process now has, after a restart) is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lockPath = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeFileSync(fd, [process.pid, processStart('self')].filter(Boolean).join(' '));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(lockPath, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const [pid, start] = readFileSync(lockPath, 'utf8').trim().split(' ');
      const holder = Number(pid);
      if (holderAlive(holder, start)) {
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
  /**
   * Ends the database thread as a crash inside PostgreSQL would (for drills and tests); it is
   * opened again as after a real one. Only where it runs in a thread of its own.
   */
  crash?(): Promise<void>;
}

/** Where the embedded database runs: a thread of its own, or the service's own thread. */
export type EmbeddedThread = 'worker' | 'main';

/** PGlite in this thread: each statement runs synchronously on the event loop. */
async function inThisThread(
  pgDir: string,
): Promise<Omit<EmbeddedPostgres, 'close'> & { end(): Promise<void> }> {
  const db = await PGlite.create({ fs: new PrivateNodeFS(pgDir), extensions: { vector, pg_trgm } });
  return { pgConfig: createPgConfig(db), end: () => db.close() };
}

/**
 * PGlite in a worker thread, reached through the wire protocol. If the thread dies (PostgreSQL
 * aborts inside WebAssembly: a PANIC, memory exhausted) it is opened again, as a server's
 * postmaster restarts after a crash, with crash recovery from its WAL; until then statements
 * fail as a server's would while it restarts (UNAVAILABLE, DATABASE_UNAVAILABLE).
 */
async function inAThread(
  pgDir: string,
): Promise<Omit<EmbeddedPostgres, 'close'> & { end(): Promise<void> }> {
  const logger = new Logger('Database');
  let closed = false;
  let thread: PGliteThread;
  const reopen = async (delayMs: number): Promise<void> => {
    if (closed) return;
    try {
      thread = await PGliteThread.start(pgDir, onExit);
      logger.warn({ msg: 'the embedded database was opened again', afterMs: delayMs });
    } catch (err) {
      const next = Math.min(delayMs * 2, 30_000);
      logger.error({
        msg: 'the embedded database could not be opened again',
        error: (err as Error).message,
        retryInMs: next,
      });
      setTimeout(() => void reopen(next), next).unref();
    }
  };
  const onExit = () => {
    if (!closed) setTimeout(() => void reopen(1000), 1000).unref();
  };
  thread = await PGliteThread.start(pgDir, onExit);
  return {
    pgConfig: { stream: () => thread.stream() },
    crash: () => thread.abort(),
    end: async () => {
      closed = true;
      await thread.close();
    },
  };
}

/**
 * Creates the database directory in one step: PGlite writes a new cluster's files one by one,
 * so a process killed on its first start would leave `pg` half made, which no later start could
 * open. It is made in `pg.init` and renamed into place once whole; anything left of an earlier
 * try is put aside, never deleted (it may hold something a person wants back).
 */
async function initializeOnce(pgDir: string): Promise<void> {
  if (existsSync(join(pgDir, 'PG_VERSION'))) return;
  if (existsSync(pgDir)) renameSync(pgDir, `${pgDir}.incomplete-${Date.now()}`);
  const staging = `${pgDir}.init`;
  rmSync(staging, { recursive: true, force: true });
  const db = await PGlite.create({
    fs: new PrivateNodeFS(staging),
    extensions: { vector, pg_trgm },
  });
  await db.close();
  renameSync(staging, pgDir);
}

/**
 * Opens (creating if needed) the embedded PostgreSQL with pgvector and pg_trgm, under a lock, in
 * a data directory that is the service user's alone (private-files.ts, private-node-fs.mjs).
 */
export async function openEmbeddedPostgres(
  dataDir: string,
  where: EmbeddedThread = 'worker',
): Promise<EmbeddedPostgres> {
  keepNewFilesPrivate();
  const notice = tighteningNotice(securePrivateDir(dataDir));
  if (notice) new Logger('Database').warn(notice);
  const release = lockDataDir(dataDir);
  const pgDir = join(resolve(dataDir), 'pg');
  try {
    await initializeOnce(pgDir);
    const { pgConfig, end, crash } = await (where === 'worker'
      ? inAThread(pgDir)
      : inThisThread(pgDir));
    let closed = false;
    return {
      pgConfig,
      ...(crash ? { crash } : {}),
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
