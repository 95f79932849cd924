import { INestApplication } from '@nestjs/common';
import { createClient, Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { AppConfig } from '../../src/config/app-config.js';
import { loadAppConfig } from '../../src/app.config.js';
import { createApp } from '../../src/bootstrap.js';
import { createTestDatabase, existingTestDatabase } from './test-database.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long';

/** Rate limits no test reaches unless it means to (service processes get them through env). */
export const GENEROUS_LIMITS = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
  MODEL_CALLS_PER_USER_PER_MINUTE: '100000',
};

export interface GqlResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
}

/** A connection as queries read it: `edges { node { ... } }`. */
export interface Edges<T> {
  edges: { node: T }[];
}

/** The nodes of a connection, read from its edges. */
export function nodes<T>(connection: Edges<T>): T[] {
  return connection.edges.map((e) => e.node);
}

export interface TestUser {
  sub: string;
  email?: string;
  name?: string;
  admin?: boolean;
  token: string;
}

export interface TestApp {
  app: INestApplication;
  url: string;
  wsUrl: string;
  dataDir: string;
  /** The variables that point another start at this app's database (with `keepData`). */
  databaseEnv: Record<string, string>;
  config: AppConfig;
  user(sub: string, claims?: { email?: string; name?: string; admin?: boolean }): Promise<TestUser>;
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    as?: TestUser | string | null,
  ): Promise<GqlResponse<T>>;
  ws(as?: TestUser | string | null): Client;
  close(): Promise<void>;
}

export async function signToken(
  sub: string,
  claims: Record<string, unknown> = {},
  options: { expiresIn?: string | number; notBefore?: string | number; secret?: string } = {},
): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '1h');
  if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

/**
 * The real application on a private copy of the migrated template database, listening on a
 * random loopback port, with helpers that call it the way the frontend does.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  /** keepData: leave the database on close, to restart on it (pass `databaseEnv` in env). */
  options: { keepData?: boolean } = {},
): Promise<TestApp> {
  const db = env.DATA_DIR ? existingTestDatabase(env) : await createTestDatabase();
  const config = loadAppConfig({
    // The suite makes thousands of calls as a handful of users: tests of the limits set their own.
    ...GENEROUS_LIMITS,
    ...db.env,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'silent',
    // Jest keeps every test file's modules, so each file would read WordNet (150 MB) again and
    // hold it to the end of the worker: the suites about kinds turn them on.
    SEARCH_KINDS: 'false',
    // The suite's rankings and thresholds are asserted with the encoder that needs no fetch;
    // the default (fetched) encoder has tests of its own (local-models.e2e-spec.ts).
    EMBEDDINGS_LOCAL_MODEL: 'use-lite',
    // A test that waits past an hour's :41 would otherwise back up its database; backups have
    // tests of their own.
    BACKUP_SCHEDULE: 'off',
    ...env,
  });
  const app = await createApp(config);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}/graphql`;
  const wsUrl = `ws://127.0.0.1:${address.port}/graphql`;
  const clients: Client[] = [];

  const tokenOf = (as: TestUser | string | null | undefined) =>
    as == null ? null : typeof as === 'string' ? as : as.token;

  return {
    app,
    url,
    wsUrl,
    dataDir: db.dataDir,
    databaseEnv: db.env,
    config,
    async user(sub, claims = {}) {
      const token = await signToken(sub, {
        // The provider vouches for the address: only then may it claim invitations.
        ...(claims.email ? { email: claims.email, email_verified: true } : {}),
        ...(claims.name ? { name: claims.name } : {}),
        ...(claims.admin ? { admin: true } : {}),
      });
      return { sub, ...claims, token };
    },
    async gql(query, variables = {}, as = null) {
      const token = tokenOf(as);
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as GqlResponse<never>;
    },
    ws(as = null) {
      const token = tokenOf(as);
      const client = createClient({
        url: wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: token ? { authorization: `Bearer ${token}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.dispose()));
      await app.close();
      if (!options.keepData) await db.remove();
    },
  };
}

/** Collects events of one subscription until `count` arrive or the timeout passes. */
export function subscribe<T = Record<string, unknown>>(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
) {
  const events: GqlResponse<T>[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let done = false;
  let error: unknown = null;
  const notify = () => {
    for (const w of [...waiters]) {
      if (events.length >= w.count || done) {
        w.resolve();
        waiters.splice(waiters.indexOf(w), 1);
      }
    }
  };
  const ready = new Promise<void>((resolve) => setTimeout(resolve, 150));
  const unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (value) => {
        events.push(value as GqlResponse<T>);
        notify();
      },
      error: (err) => {
        error = err;
        done = true;
        notify();
      },
      complete: () => {
        done = true;
        notify();
      },
    },
  );
  return {
    events,
    ready,
    get error() {
      return error;
    },
    get done() {
      return done;
    },
    async waitFor(count: number, timeoutMs = 5000): Promise<GqlResponse<T>[]> {
      if (events.length < count && !done) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`expected ${count} events, got ${events.length}`)),
            timeoutMs,
          );
          waiters.push({
            count,
            resolve: () => {
              clearTimeout(timer);
              resolve();
            },
          });
        });
      }
      return events;
    },
    unsubscribe,
  };
}
