import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createClient, Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { parse as parseYaml } from 'yaml';
import { resuming } from '../../web/src/lib/resume.js';
import { GENEROUS_LIMITS, signToken, subscribe, TEST_JWT_SECRET } from '../support/test-app.js';
import { createTestDatabase, ON_SERVER, TestDatabase } from '../support/test-database.js';
import {
  children,
  ensureBuilt,
  gql,
  MAIN,
  ROOT,
  run,
  Service,
  until,
} from '../support/service-process.js';

/**
 * Two service processes on one real PostgreSQL server, as an operator runs them behind a load
 * balancer: what one instance stores, the other's subscribers see; turn indexes stay gapless
 * under racing sends through both pools; a sign-out on one is refused on the other; a
 * subscriber whose instance is killed resumes on the other without missing a turn.
 *
 * @pass server: two processes cannot share one embedded database.
 */
const describeServer = ON_SERVER ? describe : describe.skip;

/** The environment of each named Keepsake service of docker-compose.yml, every value a string. */
function composeEnvironments(services: string[]): Record<string, string>[] {
  const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as { services: Record<string, { environment: Record<string, string | number> }> };
  return services.map((name) =>
    Object.fromEntries(
      Object.entries(compose.services[name].environment).map(([k, v]) => [k, String(v)]),
    ),
  );
}

/** The runtime stage's CMD of the Dockerfile. */
function dockerCommand(): string[] {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const cmds = [...dockerfile.matchAll(/^CMD (\[.*\])$/gm)];
  return JSON.parse(cmds[cmds.length - 1][1]) as string[];
}

describeServer('Two instances on one PostgreSQL server', () => {
  let db: TestDatabase;
  let a: Service;
  let b: Service;
  let urlA: string;
  let urlB: string;
  let token: string;
  let legacyId: string;
  let conversationId: string;
  const clients: Client[] = [];

  const wsClient = (url: string) => {
    const client = createClient({
      url: url.replace('http://', 'ws://'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    clients.push(client);
    return client;
  };
  const onServer = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    ensureBuilt();
    db = await createTestDatabase();
    // What docker-compose.yml runs: the Dockerfile's command with each instance's environment,
    // pointed at this test's database.
    expect(dockerCommand()).toEqual(['node', relative(ROOT, MAIN)]);
    const [envA, envB] = composeEnvironments(['keepsake-1', 'keepsake-2']).map((env) => ({
      ...env,
      ...db.env,
      DATABASE_URL: db.databaseUrl!,
      JWT_SECRET: TEST_JWT_SECRET,
      ...GENEROUS_LIMITS,
      // A crowd on a loaded test machine may wait past the default 10 s for a connection; what
      // this file checks is that nothing is lost or out of order, not how long the queue waits.
      DATABASE_QUEUE_TIMEOUT_MS: '60000',
      PORT: '0',
      JOBS_POLL_MS: '200',
    }));
    a = run(MAIN, envA);
    b = run(MAIN, envB);
    [urlA, urlB] = await Promise.all([a.listening, b.listening]);
    token = await signToken('multi-owner', { email: 'owner@example.com' });
    const legacy = await gql<{ createLegacy: { id: string } }>(
      urlA,
      token,
      'mutation { createLegacy(input: { name: "Ada" }) { id } }',
    );
    legacyId = legacy.data!.createLegacy.id;
    const conversation = await gql<{ startConversation: { id: string } }>(
      urlB,
      token,
      'mutation($l: ID!) { startConversation(input: { legacyId: $l, remember: true }) { id } }',
      { l: legacyId },
    );
    conversationId = conversation.data!.startConversation.id;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    for (const child of children) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    await db?.remove();
  });

  const send = (url: string, content: string) =>
    gql<{ sendMessage: { message: { turnIndex: number } } }>(
      url,
      token,
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { turnIndex } } }',
      { i: { conversationId, content } },
    );

  it('delivers every subscription to the other instance', async () => {
    const client = wsClient(urlB);
    // From the log first (afterTurnIndex -1): graphql-ws says nothing when a subscription is
    // live on the server, and on a loaded machine the first turn may be stored before it is.
    const messages = subscribe<{ messageAdded: { content: string; role: string } }>(
      client,
      'subscription($c: ID!) { messageAdded(conversationId: $c, afterTurnIndex: -1) { content role } }',
      { c: conversationId },
    );
    const deltas = subscribe<{ assistantReplyDelta: { done: boolean } }>(
      client,
      'subscription($c: ID!) { assistantReplyDelta(conversationId: $c) { done } }',
      { c: conversationId },
    );
    const facts = subscribe<{ factChanged: { change: string; fact: { content: string } } }>(
      client,
      'subscription($l: ID!) { factChanged(legacyId: $l) { change fact { content } } }',
      { l: legacyId },
    );
    const memories = subscribe<{ memoryChanged: { action: string } }>(
      client,
      'subscription { memoryChanged { action } }',
    );
    await Promise.all([messages.ready, deltas.ready, facts.ready, memories.ready]);

    expect((await send(urlA, 'She kept bees behind the house.')).errors).toBeUndefined();
    await gql(
      urlA,
      token,
      `mutation($l: ID!) { addFact(input: { legacyId: $l, category: HOBBY,
         content: "She kept bees.", visibility: SHARED }) { id } }`,
      { l: legacyId },
    );
    await gql(
      urlA,
      token,
      'mutation { rememberThis(input: { content: "I prefer short answers." }) { outcome } }',
    );

    const [user] = await messages.waitFor(1, 10_000);
    expect(user.data!.messageAdded).toEqual({
      content: 'She kept bees behind the house.',
      role: 'USER',
    });
    // The reply is written by instance A and streamed to B's subscriber, final event included.
    await messages.waitFor(2, 15_000);
    expect(messages.events[1].data!.messageAdded.role).toBe('ASSISTANT');
    expect(deltas.events.some((e) => e.data!.assistantReplyDelta.done)).toBe(true);
    const [fact] = await facts.waitFor(1, 10_000);
    expect(fact.data!.factChanged).toEqual({
      change: 'CREATED',
      fact: { content: 'She kept bees.' },
    });
    const [memory] = await memories.waitFor(1, 10_000);
    expect(memory.data!.memoryChanged.action).toEqual(expect.any(String));
  }, 60_000);

  it('still delivers after the LISTEN connection is killed on the server', async () => {
    const client = wsClient(urlB);
    const messages = subscribe<{ messageAdded: { content: string } }>(
      client,
      'subscription($c: ID!) { messageAdded(conversationId: $c) { content } }',
      { c: conversationId },
    );
    await messages.ready;
    const killed = await onServer<{ pid: number }>(
      `SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    // One listener per instance.
    expect(killed.length).toBe(2);
    // Events sent while the listener was away are lost to it: once LISTEN is back, each socket
    // is closed with a reason the client acts on (subscribe again and refetch).
    await messages.waitFor(1, 15_000).catch(() => undefined);
    expect(messages.done).toBe(true);
    expect(messages.error).toMatchObject({
      code: 1012,
      reason: 'Events were interrupted: reconnect, subscribe again and refetch.',
    });
    const again = subscribe<{ messageAdded: { content: string } }>(
      wsClient(urlB),
      'subscription($c: ID!) { messageAdded(conversationId: $c) { content } }',
      { c: conversationId },
    );
    await again.ready;
    // `ready` is a short pause, not the server's word: give the subscribe message time to land.
    await new Promise((r) => setTimeout(r, 1500));
    await send(urlA, 'After the listener was dropped.');
    // The agent's reply to an earlier turn may come first.
    const heard = () =>
      again.events.some((e) => e.data?.messageAdded.content === 'After the listener was dropped.');
    const deadline = Date.now() + 15_000;
    while (!heard() && Date.now() < deadline) {
      await again.waitFor(again.events.length + 1, 2_000).catch(() => undefined);
    }
    expect(heard()).toBe(true);
    const listening = await onServer<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    expect(listening[0].n).toBe(2);
  }, 60_000);

  it('keeps turn indexes gapless under 50 racing sends through both pools', async () => {
    const before = await onServer<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1`,
      [conversationId],
    );
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => send(i % 2 ? urlA : urlB, `Racing turn ${i}.`)),
    );
    expect(results.filter((r) => r.errors)).toEqual([]);
    // Replies settle in the background; then every index from 0 is used exactly once.
    const deadline = Date.now() + 60_000;
    let rows: { turn_index: number }[];
    for (;;) {
      rows = await onServer<{ turn_index: number }>(
        `SELECT turn_index FROM messages WHERE conversation_id = $1 ORDER BY turn_index`,
        [conversationId],
      );
      if (rows.length >= before[0].n + 100 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(rows.length).toBe(before[0].n + 100);
    expect(rows.map((r) => r.turn_index)).toEqual(rows.map((_, i) => i));
  }, 90_000);

  it('refuses a session signed out on one instance on the other, and closes its sockets there', async () => {
    // Another sign-in of the owner: a token of its own.
    const session = await signToken('multi-owner', {
      email: 'owner@example.com',
      device: 'tablet',
    });
    // B has seen the token and trusts it; a socket of that session is open on B.
    expect((await gql(urlB, session, '{ me { id } }')).errors).toBeUndefined();
    const client = createClient({
      url: urlB.replace('http://', 'ws://'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${session}` },
      retryAttempts: 0,
    });
    clients.push(client);
    const memories = subscribe<{ memoryChanged: { action: string } }>(
      client,
      'subscription { memoryChanged { action } }',
    );
    await gql(
      urlA,
      token,
      'mutation { rememberThis(input: { content: "I grow tomatoes." }) { outcome } }',
    );
    await memories.waitFor(1, 10_000);

    // Signed out through the console on A.
    const origin = new URL(urlA).origin;
    const opened = await fetch(`${origin}/app/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, origin },
    });
    const cookie = opened.headers.get('set-cookie')!.split(';')[0];
    const closed = await fetch(`${origin}/app/session`, {
      method: 'DELETE',
      headers: { origin, cookie },
    });
    expect(closed.status).toBe(200);

    // B hears of it: its socket of the session is closed, and the token is refused there.
    await until(() => memories.done, 10_000);
    expect(memories.error).toMatchObject({
      code: 4401,
      reason: 'The session was signed out: sign in again.',
    });
    for (const url of [urlB, urlA]) {
      const refused = await gql(url, session, '{ me { id } }');
      expect(refused.errors![0].extensions).toMatchObject({
        code: 'UNAUTHENTICATED',
        reason: 'TOKEN_REVOKED',
      });
    }
    // The owner's other session goes on, on both.
    for (const url of [urlA, urlB]) {
      expect((await gql(url, token, '{ me { id } }')).errors).toBeUndefined();
    }
  }, 60_000);

  // Last: it kills instance A.
  it('resumes on the other instance when one is killed while turns are stored: every turn once, in order', async () => {
    const started = await gql<{ startConversation: { id: string } }>(
      urlB,
      token,
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacyId },
    );
    const c = started.data!.startConversation.id;
    // The console's client behind a load balancer: A while it lives, then B.
    let alive = urlA;
    const closes: number[] = [];
    const client = createClient({
      url: () => alive.replace('http://', 'ws://'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      lazy: true,
      retryAttempts: 30,
      retryWait: () => new Promise((r) => setTimeout(r, 100)),
      on: { closed: (e) => closes.push((e as { code: number }).code) },
    });
    clients.push(client);
    const received: number[] = [];
    const payload = {
      query: `subscription($c: ID!, $afterTurnIndex: Int) {
        messageAdded(conversationId: $c, afterTurnIndex: $afterTurnIndex) { turnIndex } }`,
      variables: { c, afterTurnIndex: -1 },
    };
    client.subscribe<{ messageAdded: { turnIndex: number } }>(
      payload,
      resuming(payload, {
        next: (v) => received.push(v.data!.messageAdded.turnIndex),
        error: () => undefined,
        complete: () => undefined,
      }),
    );
    // Turns stored through B (the client's own model's replies: no agent reply to wait for).
    const store = async (i: number) => {
      const res = await gql<{ recordAssistantMessage: { turnIndex: number } }>(
        urlB,
        token,
        'mutation($c: ID!, $t: String!) { recordAssistantMessage(input: { conversationId: $c, content: $t }) { turnIndex } }',
        { c, t: `Turn ${i}.` },
      );
      expect(res.data!.recordAssistantMessage.turnIndex).toBe(i);
    };
    await store(0);
    await until(() => received.length === 1, 15_000);
    for (let i = 1; i < 10; i++) {
      await store(i);
      if (i === 3) {
        alive = urlB;
        a.proc.kill('SIGKILL');
      }
    }
    await until(() => received.length >= 10, 30_000);
    await store(10);
    await until(() => received.length >= 11, 15_000);
    expect(received).toEqual(Array.from({ length: 11 }, (_, i) => i));
    // The socket to A was cut, not closed by the service.
    expect(closes[0]).toBe(1006);
  }, 90_000);
});
