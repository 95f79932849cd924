import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { WITHHELD_REPLY } from '../../src/conversations/withheld-reply.js';
import { resuming } from '../../web/src/lib/resume.js';
import { joinLegacy } from '../support/membership.js';
import { until } from '../support/service-process.js';
import { ON_SERVER } from '../support/test-database.js';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

const RESUME = `subscription($c: ID!, $afterTurnIndex: Int) {
  messageAdded(conversationId: $c, afterTurnIndex: $afterTurnIndex) { turnIndex content } }`;

type Turn = { messageAdded: { turnIndex: number; content: string } };

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const indexes = (events: GqlResponse<Turn>[]) => events.map((e) => e.data!.messageAdded.turnIndex);

/**
 * messageAdded(afterTurnIndex): the turns stored after an index are sent from the log, then the
 * live ones, each once and in order, under the same access rule as live events, also when the
 * service tells the client to reconnect (1012 after its LISTEN connection dropped). The client
 * is the console's own: graphql-ws with lib/resume.ts keeping afterTurnIndex at the last turn.
 */
describe('messageAdded(afterTurnIndex): subscriptions that resume', () => {
  let t: TestApp;
  let owner: TestUser;
  let legacyId: string;

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    owner = await t.user('resume-owner', { email: 'resume-owner@example.com' });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Ada" }) { id } }',
      {},
      owner,
    );
    legacyId = created.data!.createLegacy.id;
  });
  afterAll(() => t.close());

  async function start(as: TestUser = owner): Promise<string> {
    const res = await t.gql<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacyId },
      as,
    );
    return res.data!.startConversation.id;
  }

  async function send(c: string, content: string, as: TestUser = owner): Promise<number> {
    const res = await t.gql<{ sendMessage: { message: { turnIndex: number } } }>(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { turnIndex } } }',
      { i: { conversationId: c, content } },
      as,
    );
    expect(res.errors).toBeUndefined();
    return res.data!.sendMessage.message.turnIndex;
  }

  it('sends the turns after the index from the log, then the live ones, each once', async () => {
    const c = await start();
    for (const i of [0, 1, 2]) expect(await send(c, `Turn ${i}`)).toBe(i);
    const resumed = subscribe<Turn>(t.ws(owner), RESUME, { c, afterTurnIndex: 0 });
    expect(indexes(await resumed.waitFor(2))).toEqual([1, 2]);
    await send(c, 'Turn 3');
    await send(c, 'Turn 4');
    expect(indexes(await resumed.waitFor(4))).toEqual([1, 2, 3, 4]);
    expect(resumed.events[2].data!.messageAdded.content).toBe('Turn 3');
    // -1: from the first turn.
    const whole = subscribe<Turn>(t.ws(owner), RESUME, { c, afterTurnIndex: -1 });
    expect(indexes(await whole.waitFor(5))).toEqual([0, 1, 2, 3, 4]);
    await send(c, 'Turn 5');
    expect(indexes(await whole.waitFor(6))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(indexes(await resumed.waitFor(5))).toEqual([1, 2, 3, 4, 5]);
    for (const sub of [resumed, whole]) sub.unsubscribe();
  });

  it('misses none and repeats none while turns are sent as it catches up', async () => {
    const c = await start();
    for (const i of range(0, 5)) await send(c, `Turn ${i}`);
    // Turns go on being stored while the subscription reads the log and starts listening.
    const sending = (async () => {
      for (const i of range(5, 40)) await send(c, `Turn ${i}`);
    })();
    const resumed = subscribe<Turn>(t.ws(owner), RESUME, { c, afterTurnIndex: 1 });
    await sending;
    expect(indexes(await resumed.waitFor(38, 20_000))).toEqual(range(2, 40));
    // Nothing more was owed: the next turn is the next event.
    await send(c, 'Turn 40');
    expect(indexes(await resumed.waitFor(39))).toEqual(range(2, 41));
    resumed.unsubscribe();
  });

  it('replays under the rule live events follow: withheld replies withheld, no turn for others', async () => {
    const member = await t.user('resume-member', { email: 'resume-member@example.com' });
    const stranger = await t.user('resume-stranger');
    await joinLegacy(t, owner, legacyId, member);
    const c = await start();
    // A reply made for the owner alone (before anyone else took part), then a turn of theirs.
    await t.gql(
      'mutation($c: ID!) { recordAssistantMessage(input: { conversationId: $c, content: "Only yours: the key is under the pot." }) { id } }',
      { c },
      owner,
    );
    await send(c, 'Hello');
    const me = await t.gql<{ me: { id: string } }>('{ me { id } }', {}, member);
    await t.gql(
      'mutation($c: ID!, $u: ID!) { addConversationParticipant(input: { conversationId: $c, userId: $u }) { id } }',
      { c, u: me.data!.me.id },
      owner,
    );
    const seen = subscribe<Turn>(t.ws(member), RESUME, { c, afterTurnIndex: -1 });
    const [reply, hello] = await seen.waitFor(2);
    expect(reply.data!.messageAdded).toEqual({ turnIndex: 0, content: WITHHELD_REPLY });
    expect(hello.data!.messageAdded).toEqual({ turnIndex: 1, content: 'Hello' });
    const own = subscribe<Turn>(t.ws(owner), RESUME, { c, afterTurnIndex: -1 });
    expect((await own.waitFor(1))[0].data!.messageAdded.content).toBe(
      'Only yours: the key is under the pot.',
    );
    // Someone who takes no part gets what they get live: NOT_FOUND, and no turn.
    const refused = subscribe<Turn>(t.ws(stranger), RESUME, { c, afterTurnIndex: -1 });
    const [answer] = await refused.waitFor(1);
    const errors = answer?.errors ?? (refused.error as GqlResponse['errors']);
    expect(errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(refused.events.filter((e) => e.data)).toEqual([]);
    // One who leaves is ended as live: NOT_FOUND, before any later turn.
    await t.gql(
      'mutation($c: ID!) { leaveConversation(conversationId: $c) { id } }',
      { c },
      member,
    );
    await until(() => seen.done || seen.events.length > 2);
    expect(seen.events.at(-1)!.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    const afterLeaving = subscribe<Turn>(t.ws(member), RESUME, { c, afterTurnIndex: 0 });
    const [late] = await afterLeaving.waitFor(1);
    expect(
      (late?.errors ?? (afterLeaving.error as GqlResponse['errors']))![0].extensions,
    ).toMatchObject({ code: 'NOT_FOUND' });
    // An index below -1 is the client's mistake.
    const bad = subscribe<Turn>(t.ws(owner), RESUME, { c, afterTurnIndex: -2 });
    await bad.waitFor(1).catch(() => undefined);
    const badErrors = bad.events[0]?.errors ?? (bad.error as GqlResponse['errors']);
    expect(badErrors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'INVALID_INPUT',
      field: 'afterTurnIndex',
    });
    own.unsubscribe();
  });

  (ON_SERVER ? it : it.skip)(
    'resumes after 1012 when its LISTEN connection is cut while turns are sent: every turn once, in order',
    async () => {
      const c = await start();
      const closes: number[] = [];
      const client: Client = createClient({
        url: t.wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${owner.token}` },
        lazy: true,
        retryAttempts: 30,
        retryWait: () => new Promise((r) => setTimeout(r, 50)),
        on: { closed: (e) => closes.push((e as { code: number }).code) },
      });
      const received: number[] = [];
      const payload = { query: RESUME, variables: { c, afterTurnIndex: -1 } };
      const stop = client.subscribe<Turn>(
        payload,
        resuming(payload, {
          next: (v) => received.push(v.data!.messageAdded.turnIndex),
          error: () => undefined,
          complete: () => undefined,
        }),
      );
      await send(c, 'Turn 0');
      await until(() => received.length === 1, 10_000);
      for (const i of range(1, 10)) {
        await send(c, `Turn ${i}`);
        if (i === 3) await cutListener(t.databaseEnv.DATABASE_URL);
      }
      // The service closes the socket once it listens again; the client comes back for the rest.
      await until(() => closes.includes(1012), 20_000);
      await until(() => received.length >= 10, 20_000);
      await send(c, 'Turn 10');
      await until(() => received.length >= 11, 10_000);
      expect(received).toEqual(range(0, 11));
      stop();
      await client.dispose();
    },
    60_000,
  );
});

/** Ends the service's LISTEN connection on the server, as a failover or a network cut would. */
async function cutListener(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    expect(rows).toHaveLength(1);
  } finally {
    await client.end();
  }
}
