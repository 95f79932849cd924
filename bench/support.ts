import { execFileSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AppConfig } from '../src/config/app-config.js';
import { loadAppConfig } from '../src/app.config.js';

/** Helpers the benchmarks share. Each run signs its own tokens with a secret of its own. */

export { percentile } from '../src/search/eval/locomo.js';

export const JWT_SECRET = randomUUID() + randomUUID();

/** A benchmark measures throughput, not the rate limits: one user makes thousands of calls. */
export const BENCH_LIMITS = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
  MODEL_CALLS_PER_USER_PER_MINUTE: '100000',
};

/** An HS256 JWT made with node:crypto, as the service verifies them with JWT_SECRET. */
export function token(sub: string, validHours = 24): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub, iat: now, exp: now + validHours * 3600 };
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`;
}

/** A Markdown table with every column right-aligned (figures). */
export function table(rows: Record<string, string>[]): string {
  const keys = Object.keys(rows[0]);
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => r[k].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
  return [
    line(keys),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map((r) => line(keys.map((k) => r[k]))),
  ].join('\n');
}

/**
 * The server a bench runs on: DATABASE_URL when given, else with `--server` the project's test
 * server (test/support/postgres.sh, started or reused), else none (the embedded database).
 */
export function benchServerUrl(server: boolean): string | undefined {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (!server) return undefined;
  const out = execFileSync('bash', ['test/support/postgres.sh', 'start'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').pop();
}

/**
 * A database of the bench's own on the DATABASE_URL server, dropped by `drop()`. With `name`, that
 * database: made if it does not exist yet (`created` says so), else left as it is, to be reused.
 */
export async function benchDatabase(
  url: string,
  name?: string,
): Promise<{ url: string; drop: () => Promise<void>; created: boolean }> {
  if (name !== undefined && !/^[a-z_][a-z0-9_]*$/.test(name)) {
    throw new Error(`--database must be a plain lower-case name, not '${name}'`);
  }
  const own = name ?? `keepsake_bench_${process.pid}`;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const run = async (sql: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  const exists =
    name !== undefined &&
    (await run('SELECT 1 FROM pg_database WHERE datname = $1', [own])).length > 0;
  if (!exists) {
    await run(`DROP DATABASE IF EXISTS "${own}" WITH (FORCE)`);
    await run(`CREATE DATABASE "${own}"`);
  }
  const target = new URL(url);
  target.pathname = `/${own}`;
  console.log(`database ${own} on ${admin.host}${exists ? ' (reused)' : ''}`);
  return {
    url: target.toString(),
    drop: async () => {
      await run(`DROP DATABASE IF EXISTS "${own}" WITH (FORCE)`);
    },
    created: !exists,
  };
}

/** A command-line option that must be a whole number of at least `min`. */
export function wholeArg(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}`);
  return n;
}

/**
 * The service's configuration for a load benchmark: the variables set in the environment apply
 * (EMBEDDINGS_LOCAL_MODEL, EMBEDDED_DATABASE_THREAD=main, say), under the bench's own limits,
 * data directory and server (with pools of 20 for writes and 20 for reads unless
 * DATABASE_POOL_SIZE or DATABASE_READ_POOL_SIZE say otherwise), with the agent's reply off;
 * `overrides` last.
 */
export function benchConfig(
  dataDir: string,
  server: { url: string } | null,
  overrides: Record<string, string> = {},
): AppConfig {
  return loadAppConfig({
    ...process.env,
    ...BENCH_LIMITS,
    DATA_DIR: dataDir,
    ...(server
      ? {
          DATABASE_URL: server.url,
          DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '20',
          DATABASE_READ_POOL_SIZE: process.env.DATABASE_READ_POOL_SIZE ?? '20',
        }
      : {}),
    JWT_SECRET,
    LOG_LEVEL: 'silent',
    AGENT_REPLY: 'off',
    ...overrides,
  });
}

/** A small deterministic PRNG (mulberry32), so runs are comparable. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A free TCP port on loopback. */
async function freePort(): Promise<number> {
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

/** A primary and its streaming replicas for a bench's `--replicas N`, stopped by `stop()`. */
export interface BenchServers {
  /** The primary's URL (of its `postgres` database). */
  url: string;
  /** The replicas' URLs of a database `url` names on the primary (they hold every database). */
  replicaUrls(databaseUrl: string): string[];
  /** Resolves once every replica has replayed what the primary has written so far. */
  caughtUp(): Promise<void>;
  stop(): void;
}

/**
 * With `--replicas N`: a primary of the bench's own (not the shared test server) and N streaming
 * hot standbys of it (test/support/postgres.sh start, then replica --of), on free ports in a
 * folder of their own, removed by `stop()`. DATABASE_URL and DATABASE_REPLICA_URLS in the
 * environment, when both are set, are used instead and left running.
 */
export async function benchServers(replicas: number): Promise<BenchServers> {
  const given = process.env.DATABASE_REPLICA_URLS;
  if (process.env.DATABASE_URL) {
    if (!given) throw new Error('--replicas with DATABASE_URL needs DATABASE_REPLICA_URLS too');
    const urls = given.split(/[\s,]+(?=postgres(?:ql)?:\/\/)/i).filter(Boolean);
    return {
      url: process.env.DATABASE_URL,
      replicaUrls: (db) => urls.map((u) => withDatabase(u, new URL(db).pathname)),
      caughtUp: () => waitReplayed(process.env.DATABASE_URL!, urls),
      stop: () => undefined,
    };
  }
  const root = mkdtempSync(join(tmpdir(), 'keepsake-bench-servers-'));
  // The servers' own user (keepsake-pg, as root) must reach it.
  chmodSync(root, 0o755);
  const env = { ...process.env };
  delete env.TEST_DATABASE_URL;
  const script = (...args: string[]) =>
    execFileSync('bash', ['test/support/postgres.sh', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    })
      .trim()
      .split('\n')
      .pop()!;
  const servers: { port: number; dir: string }[] = [];
  const stop = () => {
    for (const s of servers.reverse()) {
      try {
        script('stop', '--port', String(s.port), '--dir', s.dir);
      } catch {
        // already stopped
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const primary = { port: await freePort(), dir: join(root, 'primary') };
    servers.push(primary);
    const url = script('start', '--port', String(primary.port), '--dir', primary.dir);
    const ports: number[] = [];
    for (let i = 0; i < replicas; i++) {
      const replica = { port: await freePort(), dir: join(root, `replica-${i + 1}`) };
      servers.push(replica);
      script('replica', '--of', primary.dir, '--port', String(replica.port), '--dir', replica.dir);
      ports.push(replica.port);
    }
    const replicaUrls = (db: string) =>
      ports.map((port) => {
        const u = new URL(db);
        u.port = String(port);
        return u.toString();
      });
    console.log(`servers: a primary on port ${primary.port}, replicas on ${ports.join(', ')}`);
    return { url, replicaUrls, caughtUp: () => waitReplayed(url, replicaUrls(url)), stop };
  } catch (err) {
    stop();
    throw err;
  }
}

function withDatabase(url: string, pathname: string): string {
  const u = new URL(url);
  u.pathname = pathname;
  return u.toString();
}

async function waitReplayed(primaryUrl: string, replicaUrls: string[]): Promise<void> {
  const one = async (url: string, text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<{ lsn: string }>(text)).rows[0].lsn;
    } finally {
      await client.end();
    }
  };
  const target = await one(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS lsn');
  for (const url of replicaUrls) {
    for (;;) {
      const lsn = await one(url, `SELECT (pg_last_wal_replay_lsn() >= '${target}')::text AS lsn`);
      if (lsn === 'true') break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
