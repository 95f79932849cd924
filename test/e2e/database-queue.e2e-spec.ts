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
 * UNAVAILABLE and a retry hint, having done nothing. (On a server the pool of connections has
 * no such queue: the suite on a server runs these on an embedded database too.)
 */
describe('waiting for the embedded database', () => {
  let t: TestApp;
  let owner: TestUser;
  let conversationId: string;
  let queue: DatabaseQueue;

  beforeAll(async () => {
    const db = await createTestDatabase({ embedded: true });
    t = await startTestApp({
      ...db.env,
      DATABASE_QUEUE_TIMEOUT_MS: '500',
      AGENT_REPLY: 'off',
      // Background work would take turns of its own: this file counts what requests do.
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
    });
    queue = t.app.get(DatabaseQueue);
    owner = await t.user('queue-owner');
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Queue" }) { id } }',
      {},
      owner,
    );
    const started = await t.gql<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacy.data!.createLegacy.id },
      owner,
    );
    conversationId = started.data!.startConversation.id;
  });
  afterAll(() => t.close());

  /** Holds the one connection in an open transaction, as a long statement would. */
  async function hold(): Promise<() => Promise<void>> {
    const runner = t.app.get(DataSource).createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    return async () => {
      await runner.commitTransaction();
      await runner.release();
    };
  }

  const stored = async () =>
    (
      await t.gql<{ conversation: { messageCount: number } }>(
        'query($id: ID!) { conversation(id: $id) { messageCount } }',
        { id: conversationId },
        owner,
      )
    ).data!.conversation.messageCount;

  const jobs = async () =>
    Number(
      ((await t.app.get(DataSource).query('SELECT count(*) AS n FROM jobs')) as { n: string }[])[0]
        .n,
    );

  it('refuses a request that could not begin in time, with a retry hint and nothing written', async () => {
    const before = { messages: await stored(), jobs: await jobs() };
    const release = await hold();
    let res;
    try {
      res = await t.gql(SEND, { input: { conversationId, content: 'Too late.' } }, owner);
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
    const again = await t.gql(SEND, { input: { conversationId, content: 'In time.' } }, owner);
    expect(again.errors).toBeUndefined();
    expect(await stored()).toBe(before.messages + 1);
  });

  it('refuses over WebSocket alike', async () => {
    const release = await hold();
    const call = subscribe(t.ws(owner), SEND, {
      input: { conversationId, content: 'Too late, over the socket.' },
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

  it('serves requests in the order they came in', async () => {
    const release = await hold();
    const sends: Promise<unknown>[] = [];
    try {
      for (const content of ['First.', 'Second.', 'Third.']) {
        const waiting = queue.waiting().requests;
        sends.push(t.gql(SEND, { input: { conversationId, content } }, owner));
        // The next one comes in once this one waits for the database.
        while (queue.waiting().requests === waiting) await new Promise((r) => setTimeout(r, 5));
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
});
