import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createClient, Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { GENEROUS_LIMITS, signToken, subscribe, TEST_JWT_SECRET } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';
import {
  children,
  ensureBuilt,
  gql,
  MAIN,
  ROOT,
  run,
  Service,
} from '../support/service-process.js';
import { PgServer } from '../faults/support/pg-server.js';
import { faultDir, freePort, keepOnFailure, keeping } from '../faults/support/service.js';

/** PgBouncer's pool of server connections per database: fewer than the two instances ask for. */
const POOL = 6;

/**
 * Two instances behind PgBouncer in transaction mode (Debian's pgbouncer, test/support/
 * pgbouncer.sh), as an operator runs many: a server connection is a client's for one
 * transaction only, so nothing may rely on session state between transactions. Boot (migrations
 * under the schema lock), writes, reads, racing sends and jobs all go through it; LISTEN takes
 * the direct connection of DATABASE_LISTEN_URL, and subscriptions reach the other instance.
 *
 * It needs the packaged server and starts its own: it runs in the server pass only (once).
 *
 * @pass server: PgBouncer stands in front of a server.
 */
if (!ON_SERVER) {
  process.stderr.write(
    '\n[pgbouncer] skipped in the embedded pass: it runs once, in the server pass (npm run test:server), on a server of its own\n',
  );
}

(ON_SERVER ? describe : describe.skip)('Two instances behind PgBouncer in transaction mode', () => {
  const dir = faultDir('pgbouncer');
  const bouncerDir = join(dir, 'pgbouncer');
  let server: PgServer;
  let direct = '';
  let a: Service;
  let b: Service;
  let urlA = '';
  let urlB = '';
  let token = '';
  let legacyId = '';
  let conversationId = '';
  const clients: Client[] = [];

  const bouncer = (...args: string[]) =>
    execFileSync('bash', ['test/support/pgbouncer.sh', ...args, '--dir', bouncerDir], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  const query = async <T extends pg.QueryResultRow>(
    url: string,
    text: string,
    params: unknown[] = [],
  ) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(text, params)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    ensureBuilt();
    server = new PgServer(await freePort(), join(dir, 'pg'));
    direct = server.start();
    const port = await freePort();
    const pooled = bouncer(
      'start',
      '--port',
      String(port),
      '--to',
      String(server.port),
      '--pool-size',
      String(POOL),
    )
      .split('\n')
      .pop()!
      .replace(/\/postgres$/, '/keepsake');
    const env = {
      ...GENEROUS_LIMITS,
      // A crowd on a loaded test machine may wait past the default 10 s for a connection; what
      // this file checks is that nothing is lost or out of order, not how long the queue waits.
      DATABASE_QUEUE_TIMEOUT_MS: '60000',
      DATABASE_URL: pooled,
      DATABASE_LISTEN_URL: direct,
      JWT_SECRET: TEST_JWT_SECRET,
      PORT: '0',
      JOBS_POLL_MS: '200',
    };
    a = run(MAIN, { ...env, DATA_DIR: join(dir, 'a') });
    b = run(MAIN, { ...env, DATA_DIR: join(dir, 'b') });
    [urlA, urlB] = await Promise.all([a.listening, b.listening]);
    token = await signToken('bouncer-owner', { email: 'bouncer@example.com' });
    const legacy = await gql<{ createLegacy: { id: string } }>(
      urlA,
      token,
      'mutation { createLegacy(input: { name: "Pooled" }) { id } }',
    );
    legacyId = legacy.data!.createLegacy.id;
    const conversation = await gql<{ startConversation: { id: string } }>(
      urlB,
      token,
      'mutation($l: ID!) { startConversation(input: { legacyId: $l, remember: true }) { id } }',
      { l: legacyId },
    );
    conversationId = conversation.data!.startConversation.id;
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    for (const child of children) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    try {
      bouncer('stop');
      server?.stop();
    } catch {
      // already stopped
    }
    keepOnFailure(dir);
  });

  const send = (url: string, content: string) =>
    gql<{ sendMessage: { message: { turnIndex: number } } }>(
      url,
      token,
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { turnIndex } } }',
      { i: { conversationId, content } },
    );

  it(
    'delivers subscriptions across instances over the direct LISTEN connection',
    () =>
      keeping(async () => {
        const client = createClient({
          url: urlB.replace('http://', 'ws://'),
          webSocketImpl: WebSocket,
          connectionParams: { authorization: `Bearer ${token}` },
          retryAttempts: 0,
        });
        clients.push(client);
        const messages = subscribe<{ messageAdded: { content: string; role: string } }>(
          client,
          'subscription($c: ID!) { messageAdded(conversationId: $c) { content role } }',
          { c: conversationId },
        );
        await messages.ready;
        expect((await send(urlA, 'She mended nets by the harbour.')).errors).toBeUndefined();
        const [event] = await messages.waitFor(1, 15_000);
        expect(event.data!.messageAdded).toEqual({
          content: 'She mended nets by the harbour.',
          role: 'USER',
        });
        // Each instance listens on a server connection of its own, not through the pooler.
        const listeners = await query<{ n: number }>(
          direct,
          `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = 'keepsake' AND query ILIKE 'LISTEN%' AND application_name = 'keepsake-listen'`,
        );
        expect(listeners[0].n).toBe(2);
      }),
    60_000,
  );

  it(
    'keeps turns gapless, reads its writes and runs its jobs with a handful of server connections',
    () =>
      keeping(async () => {
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) => send(i % 2 ? urlA : urlB, `Pooled turn ${i}.`)),
        );
        expect(results.filter((r) => r.errors)).toEqual([]);
        const added = await gql<{ addFact: { id: string } }>(
          urlA,
          token,
          `mutation($l: ID!) { addFact(input: { legacyId: $l, category: HOBBY, content: "She mended nets." }) { id } }`,
          { l: legacyId },
        );
        expect(added.errors).toBeUndefined();
        const listed = await gql<{ facts: { edges: { node: { id: string } }[] } }>(
          urlB,
          token,
          'query($l: ID!) { facts(legacyId: $l, first: 10) { edges { node { id } } } }',
          { l: legacyId },
        );
        expect(listed.data!.facts.edges.map((e) => e.node.id)).toContain(added.data!.addFact.id);
        const recalled = await gql<{ recall: { edges: { node: { id: string } }[] } }>(
          urlB,
          token,
          'query($l: ID!) { recall(legacyId: $l, query: "nets") { edges { node { id } } } }',
          { l: legacyId },
        );
        expect(recalled.errors).toBeUndefined();
        // The replies and the jobs (indexing, embedding, summaries) settle through the pooler too.
        const deadline = Date.now() + 90_000;
        let rows: { turn_index: number }[];
        let pending: number;
        for (;;) {
          rows = await query<{ turn_index: number }>(
            direct,
            'SELECT turn_index FROM messages WHERE conversation_id = $1 ORDER BY turn_index',
            [conversationId],
          );
          [{ n: pending }] = await query<{ n: number }>(
            direct,
            `SELECT count(*)::int AS n FROM jobs WHERE status IN ('PENDING', 'RUNNING') AND run_at <= now()`,
          );
          if ((rows.length >= 82 && pending === 0) || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        expect(rows.length).toBe(82);
        expect(rows.map((r) => r.turn_index)).toEqual(rows.map((_, i) => i));
        expect(pending).toBe(0);
        const [failed] = await query<{ n: number }>(
          direct,
          `SELECT count(*)::int AS n FROM jobs WHERE status = 'FAILED'`,
        );
        expect(failed.n).toBe(0);
        // However many connections the instances' pools hold, the server saw at most POOL of
        // theirs (PgBouncer's), beside the two listeners.
        const servers = await query<{ n: number }>(
          direct,
          `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = 'keepsake' AND backend_type = 'client backend'
            AND application_name <> 'keepsake-listen' AND pid <> pg_backend_pid()`,
        );
        expect(servers[0].n).toBeLessThanOrEqual(POOL);
      }),
    150_000,
  );
});
