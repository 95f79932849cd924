import { createServer, Server, Socket, connect as tcpConnect } from 'node:net';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadAppConfig } from '../../src/app.config.js';
import { PublicErrorCode } from '../../src/common/errors/domain.exception.js';
import { asBackground, asRequest, markQuery } from '../../src/database/database-queue.js';
import {
  databaseQueue,
  DatabaseUnavailableError,
  openDataSource,
} from '../../src/database/database.module.js';
import { PGVECTOR_MINIMUM, versionAtLeast } from '../../src/database/pgvector-version.js';
import { startTestApp } from '../support/test-app.js';
import {
  createTestDatabase,
  dropServerDatabase,
  ON_SERVER,
  serverDatabaseUrl,
  TestDatabase,
} from '../support/test-database.js';

/**
 * Connection strings, pool and timeouts against the real server (TEST_DATABASE_URL).
 *
 * @pass server: what it tests is a server's connections.
 */
const describeServer = ON_SERVER ? describe : describe.skip;

const SECRET = { JWT_SECRET: 'x'.repeat(32) };

async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** A TCP port that refuses connections until `open()`, then forwards them to the server. */
async function lateProxy(
  target: URL,
): Promise<{ port: number; open: () => void; close: () => void }> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const sockets: Socket[] = [];
  let server: Server | null = null;
  return {
    port,
    open: () => {
      server = createServer((client) => {
        const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
        sockets.push(client, upstream);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      server.listen(port, '127.0.0.1');
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server?.close();
    },
  };
}

async function onMaintenance(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverDatabaseUrl('postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describeServer('DATABASE_URL on a real server', () => {
  let db: TestDatabase;
  let name: string;
  let socketDir: string;
  const opened: DataSource[] = [];

  const open = async (env: Record<string, string>) => {
    const ds = await openDataSource(loadAppConfig({ ...SECRET, ...env }), null);
    opened.push(ds);
    return ds;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    name = new URL(db.databaseUrl!).pathname.slice(1);
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ unix_socket_directories: string }>(
      'SHOW unix_socket_directories',
    );
    socketDir = rows[0].unix_socket_directories.split(',')[0].trim();
    await client.end();
  });

  afterAll(async () => {
    await Promise.all(opened.map((ds) => ds.destroy()));
    await db?.remove();
  });

  const port = () => new URL(db.databaseUrl!).port || '5432';

  it('boots the service on a Unix-socket URL with an empty host', async () => {
    const url = `postgresql://postgres@/${name}?host=${socketDir}&port=${port()}`;
    const t = await startTestApp({ DATA_DIR: db.dataDir, DATABASE_URL: url }, { keepData: true });
    try {
      const me = await t.gql<{ me: { id: string } }>('{ me { id } }', {}, await t.user('sock'));
      expect(me.errors).toBeUndefined();
      expect(me.data!.me.id).toEqual(expect.any(String));
      const [{ addr }] = await t.app.get(DataSource).query(`SELECT inet_client_addr() AS addr`);
      // No client address: the connection came through the socket, not TCP.
      expect(addr).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('accepts a percent-encoded socket path as the host', async () => {
    const host = encodeURIComponent(socketDir);
    const ds = await open({ DATABASE_URL: `postgresql://postgres@${host}:${port()}/${name}` });
    expect(await ds.query(`SELECT current_database() AS d`)).toEqual([{ d: name }]);
  });

  it('takes what the URL leaves out from the PG* variables', async () => {
    const ds = await withEnv({ PGHOST: '127.0.0.1', PGPORT: port(), PGUSER: 'postgres' }, () =>
      open({ DATABASE_URL: `postgresql:///${name}` }),
    );
    expect(await ds.query(`SELECT current_database() AS d, current_user AS u`)).toEqual([
      { d: name, u: 'postgres' },
    ]);
  });

  it('sets statement_timeout on every connection', async () => {
    const ds = await open({ DATABASE_URL: db.databaseUrl!, DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    expect(await ds.query(`SHOW statement_timeout`)).toEqual([{ statement_timeout: '300ms' }]);
    await expect(ds.query(`SELECT pg_sleep(2)`)).rejects.toMatchObject({ code: '57014' });
  });

  it('opens at most DATABASE_POOL_SIZE connections', async () => {
    const ds = await open({ DATABASE_URL: db.databaseUrl!, DATABASE_POOL_SIZE: '3' });
    const pids = await Promise.all(
      Array.from({ length: 9 }, () =>
        ds.query(`SELECT pg_backend_pid() AS pid, pg_sleep(0.2)`).then((r) => r[0].pid as number),
      ),
    );
    expect(new Set(pids).size).toBe(3);
  });

  it("hands the pool's connections to queries first, and refuses a request that cannot begin", async () => {
    const config = loadAppConfig({
      ...SECRET,
      DATABASE_URL: db.databaseUrl!,
      DATABASE_POOL_SIZE: '2',
      DATABASE_QUEUE_TIMEOUT_MS: '1500',
    });
    const queue = databaseQueue(config);
    const ds = await openDataSource(config, null, queue);
    opened.push(ds);
    await ds.query('CREATE TABLE served (id serial PRIMARY KEY, who text NOT NULL)');
    const serve = (who: string) => ds.query('INSERT INTO served (who) VALUES ($1)', [who]);
    // Both connections held by open transactions, as two long requests would.
    const runners = await Promise.all(
      [0, 1].map(async () => {
        const runner = ds.createQueryRunner();
        await runner.connect();
        await runner.startTransaction();
        return runner;
      }),
    );
    const now = performance.now();
    const statements = [
      asBackground(() => serve('job')),
      asRequest(() => serve('mutation'), now - 200),
      asRequest(() => {
        markQuery();
        return serve('query');
      }, now - 100),
    ];
    while (queue.waiting().requests < 2) await new Promise((r) => setTimeout(r, 5));
    expect(queue.waiting()).toMatchObject({ requests: 2, queries: 1, background: 1 });
    await runners[0].commitTransaction();
    await runners[0].release();
    await Promise.all(statements);
    expect(
      ((await ds.query('SELECT who FROM served ORDER BY id')) as { who: string }[]).map(
        (r) => r.who,
      ),
    ).toEqual(['query', 'mutation', 'job']);

    // One connection still held, and another request holds the other: the next one waits its
    // bound and is refused with nothing done.
    const other = ds.createQueryRunner();
    await other.connect();
    const refused = await asRequest(() => serve('refused')).catch((err: unknown) => err);
    await other.release();
    await runners[1].commitTransaction();
    await runners[1].release();
    expect(refused).toMatchObject({
      publicCode: PublicErrorCode.UNAVAILABLE,
      reason: 'DATABASE_BUSY',
      retryAfterSeconds: 2,
    });
    expect(await ds.query(`SELECT count(*)::int AS n FROM served WHERE who = 'refused'`)).toEqual([
      { n: 0 },
    ]);
  });

  it('migrates an empty database once when two instances boot on it together', async () => {
    const empty = `${name}_empty`;
    await dropServerDatabase(empty);
    await onMaintenance(`CREATE DATABASE "${empty}"`);
    try {
      const env = { DATABASE_URL: serverDatabaseUrl(empty) };
      const [one, two] = await Promise.all([open(env), open(env)]);
      const applied = (await one.query(
        `SELECT name, count(*)::int AS n FROM typeorm_migrations GROUP BY name`,
      )) as { n: number }[];
      expect(applied.length).toBe(one.migrations.length);
      expect(applied.every((m) => m.n === 1)).toBe(true);
      expect(await two.query(`SELECT count(*)::int AS n FROM legacies`)).toEqual([{ n: 0 }]);
      for (const ds of [one, two]) await ds.destroy();
      opened.splice(opened.indexOf(one), 1);
      opened.splice(opened.indexOf(two), 1);
    } finally {
      await dropServerDatabase(empty);
    }
  });

  it('reads the installed pgvector at boot and refuses one older than 0.8', async () => {
    const [{ v }] = await (
      await open({ DATABASE_URL: db.databaseUrl! })
    ).query(`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`);
    expect(versionAtLeast(v, PGVECTOR_MINIMUM)).toBe(true);

    const old = `${name}_oldvector`;
    await dropServerDatabase(old);
    await onMaintenance(`CREATE DATABASE "${old}"`);
    try {
      // A database whose pgvector was created before 0.8 and never updated, as the catalog says.
      const client = new pg.Client({ connectionString: serverDatabaseUrl(old) });
      await client.connect();
      await client.query(`CREATE EXTENSION vector`);
      await client.query(`UPDATE pg_extension SET extversion = '0.7.4' WHERE extname = 'vector'`);
      await client.end();
      await expect(open({ DATABASE_URL: serverDatabaseUrl(old) })).rejects.toThrow(
        new RegExp(
          `has pgvector 0\\.7\\.4; Keepsake needs 0\\.8\\.0 or later.*the server has pgvector ${v.replace(/\./g, '\\.')}: run ALTER EXTENSION vector UPDATE`,
        ),
      );
      const tables = new pg.Client({ connectionString: serverDatabaseUrl(old) });
      await tables.connect();
      // Refused before migrating: nothing half-written.
      const { rows } = await tables.query(`SELECT to_regclass('typeorm_migrations') AS t`);
      await tables.end();
      expect(rows).toEqual([{ t: null }]);
    } finally {
      await dropServerDatabase(old);
    }
  });

  it('waits for a server that starts after the service', async () => {
    const proxy = await lateProxy(new URL(db.databaseUrl!));
    const url = `postgres://postgres@127.0.0.1:${proxy.port}/${name}`;
    const started = Date.now();
    setTimeout(proxy.open, 1500);
    try {
      const ds = await open({ DATABASE_URL: url, DATABASE_BOOT_TIMEOUT_MS: '30000' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(await ds.query(`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
      await ds.destroy();
      opened.pop();
    } finally {
      proxy.close();
    }
  });

  it('gives up after DATABASE_BOOT_TIMEOUT_MS, and at once when waiting cannot help', async () => {
    const proxy = await lateProxy(new URL(db.databaseUrl!));
    const unreachable = `postgres://postgres@127.0.0.1:${proxy.port}/${name}`;
    let started = Date.now();
    await expect(
      open({ DATABASE_URL: unreachable, DATABASE_BOOT_TIMEOUT_MS: '1000' }),
    ).rejects.toThrow(DatabaseUnavailableError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    started = Date.now();
    const missing = new URL(db.databaseUrl!);
    missing.pathname = '/ks_no_such_database';
    await expect(
      open({ DATABASE_URL: missing.toString(), DATABASE_BOOT_TIMEOUT_MS: '30000' }),
    ).rejects.toThrow(/ks_no_such_database/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
