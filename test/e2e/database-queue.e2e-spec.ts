import { DataSource } from 'typeorm';
import { DatabaseQueue } from '../../src/database/database-queue.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import { createTestDatabase } from '../support/test-database.js';

const SEND = `mutation($input: SendMessageInput!) {
  sendMessage(input: $input) { message { turnIndex content } }
}`;

/**
 * Waiting for the embedded database over HTTP and WebSocket: requests take their turn in the
 * order they came, and one that cannot begin within DATABASE_QUEUE_TIMEOUT_MS is refused with
 * UNAVAILABLE and a retry hint, having done nothing. (The suite on a server runs these on an
 * embedded database too: one connection makes the order plain to see; the server's pool has the
 * same queue, tested in database-server.spec.ts.)
 *
 * @pass embedded: it opens an embedded database of its own in either pass.
 */
/** An app on an embedded database of its own, whose requests wait at most `timeoutMs`. */
function queueApp(timeoutMs: string) {
  const ctx = {} as { t: TestApp; owner: TestUser; conversationId: string; queue: DatabaseQueue };
  beforeAll(async () => {
    const db = await createTestDatabase({ embedded: true });
    ctx.t = await startTestApp({
      ...db.env,
      DATABASE_QUEUE_TIMEOUT_MS: timeoutMs,
      AGENT_REPLY: 'off',
      // Background work would take turns of its own: this file counts what requests do.
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
    });
    ctx.queue = ctx.t.app.get(DatabaseQueue);
    ctx.owner = await ctx.t.user('queue-owner');
    const legacy = await ctx.t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Queue" }) { id } }',
      {},
      ctx.owner,
    );
    const started = await ctx.t.gql<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacy.data!.createLegacy.id },
      ctx.owner,
    );
    ctx.conversationId = started.data!.startConversation.id;
  });
  afterAll(() => ctx.t.close());

  /** Holds the one connection in an open transaction, as a long statement would. */
  async function hold(): Promise<() => Promise<void>> {
    const runner = ctx.t.app.get(DataSource).createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    return async () => {
      await runner.commitTransaction();
      await runner.release();
    };
  }
  return { ctx, hold };
}

describe('waiting for the embedded database: refusing', () => {
  // A short bound, so that a held connection makes requests miss it.
  const { ctx, hold } = queueApp('500');

  const stored = async () =>
    (
      await ctx.t.gql<{ conversation: { messageCount: number } }>(
        'query($id: ID!) { conversation(id: $id) { messageCount } }',
        { id: ctx.conversationId },
        ctx.owner,
      )
    ).data!.conversation.messageCount;

  const jobs = async () =>
    Number(
      (
        (await ctx.t.app.get(DataSource).query('SELECT count(*) AS n FROM jobs')) as { n: string }[]
      )[0].n,
    );

  it('refuses a request that could not begin in time, with a retry hint and nothing written', async () => {
    const before = { messages: await stored(), jobs: await jobs() };
    const release = await hold();
    let res;
    try {
      res = await ctx.t.gql(
        SEND,
        { input: { conversationId: ctx.conversationId, content: 'Too late.' } },
        ctx.owner,
      );
    } finally {
      await release();
    }
    expect(res.data ?? null).toBeNull();
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0].extensions).toEqual({
      code: 'UNAVAILABLE',
      reason: 'DATABASE_BUSY',
      retryAfterSeconds: 1,
    });
    expect(res.errors![0].message).not.toMatch(/at .*\.js/);
    expect({ messages: await stored(), jobs: await jobs() }).toEqual(before);

    // Once the database is free the same call goes through.
    const again = await ctx.t.gql(
      SEND,
      { input: { conversationId: ctx.conversationId, content: 'In time.' } },
      ctx.owner,
    );
    expect(again.errors).toBeUndefined();
    expect(await stored()).toBe(before.messages + 1);
  });

  it('refuses over WebSocket alike', async () => {
    const release = await hold();
    const call = subscribe(ctx.t.ws(ctx.owner), SEND, {
      input: { conversationId: ctx.conversationId, content: 'Too late, over the socket.' },
    });
    let events;
    try {
      events = await call.waitFor(1, 5_000);
    } finally {
      await release();
    }
    expect(events[0].errors?.[0].extensions).toMatchObject({
      code: 'UNAVAILABLE',
      reason: 'DATABASE_BUSY',
    });
  });
});

describe('waiting for the embedded database: order', () => {
  // A bound no request here comes near, however slow the machine: this part is about order.
  const { ctx, hold } = queueApp('120000');

  it('serves requests in the order they came in', async () => {
    const release = await hold();
    const sends: Promise<unknown>[] = [];
    try {
      for (const content of ['First.', 'Second.', 'Third.']) {
        const waiting = ctx.queue.waiting().requests;
        sends.push(
          ctx.t.gql(SEND, { input: { conversationId: ctx.conversationId, content } }, ctx.owner),
        );
        // The next one comes in once this one waits for the database.
        while (ctx.queue.waiting().requests === waiting) await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await release();
    }
    const answers = (await Promise.all(sends)) as {
      data: { sendMessage: { message: { turnIndex: number; content: string } } };
    }[];
    const turns = answers.map((a) => a.data.sendMessage.message);
    expect(turns.map((m) => m.content)).toEqual(['First.', 'Second.', 'Third.']);
    expect(turns[1].turnIndex).toBe(turns[0].turnIndex + 1);
    expect(turns[2].turnIndex).toBe(turns[1].turnIndex + 1);
  });

  const COUNT = 'query($id: ID!) { conversation(id: $id) { messageCount } }';

  /** Holds the connection, asks, and answers what line the request waited in. */
  async function lineOf(ask: () => Promise<unknown>) {
    const release = await hold();
    let asked: Promise<unknown>;
    let line;
    try {
      asked = ask();
      while (ctx.queue.waiting().requests === 0) await new Promise((r) => setTimeout(r, 5));
      line = ctx.queue.waiting();
    } finally {
      await release();
    }
    await asked;
    return line;
  }

  // Queries go before mutations (database-queue.ts): a read someone waits on is not kept behind
  // a crowd of senders' statements.
  it('puts a query over HTTP in the queries line, a mutation in the mutations line', async () => {
    const query = await lineOf(() => ctx.t.gql(COUNT, { id: ctx.conversationId }, ctx.owner));
    expect(query).toMatchObject({ requests: 1, queries: 1 });
    const mutation = await lineOf(() =>
      ctx.t.gql(
        SEND,
        { input: { conversationId: ctx.conversationId, content: 'A mutation.' } },
        ctx.owner,
      ),
    );
    expect(mutation).toMatchObject({ requests: 1, queries: 0 });
  });

  it('puts a query over WebSocket in the queries line alike', async () => {
    const line = await lineOf(() =>
      subscribe(ctx.t.ws(ctx.owner), COUNT, { id: ctx.conversationId }).waitFor(1, 10_000),
    );
    expect(line).toMatchObject({ requests: 1, queries: 1 });
  });
});
