import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { baseEnv, children, MAIN, ROOT } from '../../support/service-process.js';

/**
 * The compiled service as operators run it (`node dist/src/main.js`), started, killed with
 * SIGKILL and started again on the same database. Its output goes to a log file per start, kept
 * for a failing run to read.
 */
export class FaultService {
  private proc: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private starts = 0;
  private url: string | null = null;

  constructor(
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {
    mkdirSync(logDir, { recursive: true });
  }

  get running(): boolean {
    return this.proc !== null;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Base URL (http://127.0.0.1:PORT) of the process started last. */
  get base(): string {
    if (!this.url) throw new Error('the service is not started');
    return this.url;
  }

  /** Starts a process (with `env` added to this service's own); resolves once it is spawned. */
  spawn(extra: Record<string, string> = {}): void {
    if (this.proc) throw new Error('already running');
    this.starts++;
    const log: WriteStream = createWriteStream(join(this.logDir, `start-${this.starts}.log`));
    const proc = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: baseEnv({ ...this.env, ...extra }),
    });
    children.add(proc);
    proc.stdout.pipe(log);
    proc.stderr.pipe(log);
    this.proc = proc;
    this.url = `http://127.0.0.1:${this.env.PORT}`;
    this.exited = new Promise((done) =>
      proc.on('exit', () => {
        children.delete(proc);
        if (this.proc === proc) this.proc = null;
        done();
      }),
    );
  }

  /** Polls GET /health/ready until it answers 200; throws if the process exits first. */
  async ready(timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const proc = this.proc;
    for (;;) {
      if (!proc || this.proc !== proc) {
        throw new Error(`the service exited before it was ready (see ${this.logDir})`);
      }
      try {
        const res = await fetch(`${this.base}/health/ready`, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** SIGKILL: no shutdown hook runs, as at a power cut of the process. */
  async kill(): Promise<void> {
    if (!this.proc) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, the graceful stop. */
  async stop(): Promise<void> {
    if (!this.proc) return;
    this.proc.kill('SIGTERM');
    await this.exited;
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** mulberry32: a small seeded generator, so that a failing run can be replayed by its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: FAULT_SEED when given (to replay one), otherwise a new one. */
export function faultSeed(): number {
  const given = process.env.FAULT_SEED;
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n)) throw new Error(`FAULT_SEED must be a whole number, not ${given}`);
    return n;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/**
 * A fault test's working folder (data directory, logs), outside the run's test databases so that
 * it can outlive the run: kept when the test failed or FAULT_KEEP is set, to read its logs.
 */
export function faultDir(name: string): string {
  return resolve('.test-dbs', 'faults', `${name}-${process.pid}`);
}

let failed = false;
/** Marks the current file as failed (its working folder is then kept). */
export function markFailed(): void {
  failed = true;
}

export function keepOnFailure(dir: string): void {
  if (failed || process.env.FAULT_KEEP) {
    process.stderr.write(`\n[faults] kept ${dir} (logs/ holds each start's output)\n`);
    return;
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Runs a test body, marking the file failed when it throws (so its folder is kept). */
export async function keeping<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    markFailed();
    throw err;
  }
}
