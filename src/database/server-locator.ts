import { Logger } from '@nestjs/common';
import pg from 'pg';
import { describeServer, ServerAddress, ServerList, serverList } from './database-url.js';

/** Node's codes and PostgreSQL's for a server that is not there, or not taking sessions. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOENT',
  '57P01',
  '57P02',
  '57P03',
  '08006',
]);

/** An unreachable server, a timeout, or a server that is (now) a standby. */
export function isFailoverError(err: unknown): boolean {
  const e = err as { code?: string; message?: string; errors?: unknown[]; cause?: unknown };
  if (!e) return false;
  if (e.code === '25006' || (e.code && UNREACHABLE.has(e.code))) return true;
  if (e instanceof NoWritableServerError) return true;
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.every(isFailoverError);
  if (/timeout|terminated unexpectedly|Connection terminated/i.test(e.message ?? '')) return true;
  return e.cause ? isFailoverError(e.cause) : false;
}

/**
 * None of a URL's servers takes writes: they are down, or standbys (during a failover, before
 * one is promoted). 08001 (sqlclient_unable_to_establish_sqlconnection) reads as UNAVAILABLE.
 */
export class NoWritableServerError extends Error {
  readonly code = '08001';
  constructor(
    message: string,
    /** Every server was unreachable or read-only: what a failover looks like, worth waiting for. */
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** After every server was found unsuitable, how long a new connection fails at once. */
const RELOCATE_PAUSE_MS = 250;

/**
 * Finds, among the servers a URL names, the one whose sessions are what target_session_attrs
 * asks (the primary, for read-write), as libpq does: the one found last first, then each in
 * order. node-postgres 8 reads one host, so this is done here; every connection the service
 * opens to the primary (its pools, the listener, the replicas' monitor) asks the same locator,
 * which finds the new primary after a promotion by itself, without a restart.
 */
export class ServerLocator {
  private readonly logger = new Logger('Database');
  private current = 0;
  private confirmed = false;
  private locating: Promise<ServerAddress> | null = null;
  private failedAt = 0;
  private lastFailure: NoWritableServerError | null = null;

  constructor(
    readonly list: ServerList,
    private readonly connectTimeoutMs: number,
  ) {}

  get servers(): ServerAddress[] {
    return this.list.servers;
  }

  /** The server connections go to now (the primary found last, or the first). */
  target(): ServerAddress {
    return this.list.servers[this.current];
  }

  /** Whether a server's session is acceptable: asked on every new connection, as libpq does. */
  async accepts(client: pg.Client): Promise<boolean> {
    if (this.list.attrs === 'any') return true;
    if (this.list.attrs === 'primary') {
      const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      return !rows[0].r;
    }
    const { rows } = await client.query<{ transaction_read_only: string }>(
      'SHOW transaction_read_only',
    );
    return rows[0].transaction_read_only === 'off';
  }

  /**
   * The server to connect to: the current one while it is known good, else the first that is
   * (one search at a time; concurrent callers share it). Throws NoWritableServerError when
   * none is, and for a short pause after that without asking again.
   */
  locate(): Promise<ServerAddress> {
    if (this.confirmed || this.list.attrs === 'any') return Promise.resolve(this.target());
    if (this.lastFailure && Date.now() - this.failedAt < RELOCATE_PAUSE_MS) {
      return Promise.reject(this.lastFailure);
    }
    return (this.locating ??= this.search().finally(() => (this.locating = null)));
  }

  /** A server that failed a connection or refused a write: the next connection searches again. */
  suspect(server: ServerAddress): void {
    if (this.target() === server && this.confirmed) {
      this.confirmed = false;
      this.logger.warn({ msg: 'database server no longer takes writes', server: describe(server) });
    }
  }

  /** A connected client to the server located, checked (for the listener and the monitors). */
  async connect(
    extra: pg.ClientConfig = {},
  ): Promise<{ client: pg.Client; server: ServerAddress }> {
    for (let attempt = 0; ; attempt++) {
      const server = await this.locate();
      const client = new pg.Client({
        connectionTimeoutMillis: this.connectTimeoutMs,
        ...extra,
        connectionString: server.url,
      });
      try {
        await client.connect();
        if (!(await this.accepts(client))) throw readOnly(server);
        return { client, server };
      } catch (err) {
        await client.end().catch(() => undefined);
        if (attempt > 0 || !isFailoverError(err)) throw err;
        this.suspect(server);
      }
    }
  }

  private async search(): Promise<ServerAddress> {
    const n = this.list.servers.length;
    const problems: string[] = [];
    let transient = true;
    for (let k = 0; k < n; k++) {
      const i = (this.current + k) % n;
      const server = this.list.servers[i];
      const client = new pg.Client({
        connectionString: server.url,
        connectionTimeoutMillis: this.connectTimeoutMs,
      });
      try {
        await client.connect();
        if (await this.accepts(client)) {
          if (i !== this.current || this.lastFailure) {
            this.logger.warn({ msg: 'database server found', server: describe(server) });
          }
          this.current = i;
          this.confirmed = true;
          this.lastFailure = null;
          return server;
        }
        problems.push(`${describe(server)}: read-only (a standby)`);
      } catch (err) {
        if (!isFailoverError(err)) transient = false;
        problems.push(`${describe(server)}: ${(err as Error).message}`);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    const failure = new NoWritableServerError(
      `no server takes ${this.list.attrs} sessions (${problems.join('; ')})`,
      transient,
    );
    this.lastFailure = failure;
    this.failedAt = Date.now();
    throw failure;
  }
}

function describe(server: ServerAddress): string {
  try {
    return describeServer(server.url);
  } catch {
    return server.host;
  }
}

function readOnly(server: ServerAddress): Error {
  return Object.assign(new Error(`the server at ${describe(server)} is read-only (a standby)`), {
    code: '25006',
  });
}

const locators = new Map<string, ServerLocator>();

/** The one locator of a URL in this process: its pools, listener and monitors share what it finds. */
export function serverLocator(url: string, connectTimeoutMs: number): ServerLocator {
  const key = `${connectTimeoutMs} ${url}`;
  let locator = locators.get(key);
  if (!locator) {
    locator = new ServerLocator(serverList(url), connectTimeoutMs);
    locators.set(key, locator);
  }
  return locator;
}

type Checkout = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (err?: Error | boolean) => void,
) => void;

/**
 * `pg` for TypeORM's `driver` option, whose pools connect to the server `locator` finds: each
 * new connection goes to the current primary and is checked as libpq checks it; a connection
 * that fails because its server went away or turned standby is retried once on the server
 * found then. A connection whose statement is refused as read-only (25006: its server is now a
 * standby, as behind a pooler that kept the client side open) is closed rather than handed out
 * again, and the next connection searches.
 */
export function failoverPg(locator: ServerLocator, base: typeof pg = pg): typeof pg {
  class FailoverClient extends base.Client {
    readonly server: ServerAddress;

    constructor(config: pg.ClientConfig) {
      const server = locator.target();
      super({ ...config, connectionString: server.url });
      this.server = server;
    }
  }
  // The promise form is the one TypeORM and the repositories use.
  const query = base.Client.prototype.query as (...args: unknown[]) => unknown;
  FailoverClient.prototype.query = function (this: FailoverClient, ...args: unknown[]) {
    const result = query.apply(this, args);
    if (result instanceof Promise) {
      return result.catch((err: { code?: string }) => {
        if (err?.code === '25006') {
          locator.suspect(this.server);
          void this.end().catch(() => undefined);
        }
        throw err;
      });
    }
    return result;
  } as typeof FailoverClient.prototype.query;

  class FailoverPool extends base.Pool {
    constructor(options: pg.PoolConfig) {
      super({
        ...options,
        connectionString: undefined,
        Client: FailoverClient,
        onConnect: async (client: pg.Client) => {
          if (!(await locator.accepts(client))) throw readOnly((client as FailoverClient).server);
        },
      } as unknown as pg.PoolConfig);
    }

    override connect(): Promise<pg.PoolClient>;
    override connect(callback: Checkout): void;
    override connect(callback?: Checkout): Promise<pg.PoolClient> | void {
      const checkout = (async () => {
        const server = await locator.locate();
        try {
          return await super.connect();
        } catch (err) {
          if (!isFailoverError(err)) throw err;
          locator.suspect(server);
          await locator.locate();
          return super.connect();
        }
      })();
      if (!callback) return checkout;
      checkout.then(
        (client) => callback(undefined, client, client.release),
        (err: Error) => callback(err, undefined, () => undefined),
      );
    }
  }
  return { ...base, Client: FailoverClient, Pool: FailoverPool } as typeof pg;
}
