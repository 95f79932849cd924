import { randomUUID } from 'node:crypto';
import { EMBEDDED_POSTGRES } from '../../src/database/database.module.js';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';

/**
 * The embedded database ending under the service (PostgreSQL aborting inside WebAssembly: a
 * PANIC, memory exhausted) as a server's postmaster would restart: statements fail with
 * UNAVAILABLE while it is away, it is opened again by itself with crash recovery, and nothing
 * acknowledged is lost. A server going away is the fault suite's (test/faults).
 *
 * @pass embedded: only the embedded database runs inside the service to crash under it.
 */
(ON_SERVER ? describe.skip : describe)('the embedded database crashing under the service', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    owner = await t.user('crash-owner');
  });
  afterAll(() => t.close());

  it('answers UNAVAILABLE while it is away, opens it again by itself, and keeps every acknowledged write', async () => {
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Opa" }) { id } }',
      {},
      owner,
    );
    const started = await t.gql<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacy.data!.createLegacy.id },
      owner,
    );
    const conversationId = started.data!.startConversation.id;
    const send = (clientMessageId: string) =>
      t.gql<{ sendMessage: { message: { turnIndex: number } } }>(
        `mutation($c: ID!, $id: String!) { sendMessage(input: {
           conversationId: $c, content: "He fixed radios.", clientMessageId: $id }) { message { turnIndex } } }`,
        { c: conversationId, id: clientMessageId },
        owner,
      );
    expect((await send('before')).data!.sendMessage.message.turnIndex).toBe(0);

    const embedded = t.app.get<EmbeddedPostgres>(EMBEDDED_POSTGRES);
    await embedded.crash!();
    const during = await send('during');
    const health = await fetch(t.url.replace('/graphql', '/health/ready'));
    // The plain HTTP routes answer as GraphQL does (/archives answered 500 before).
    const download = await fetch(new URL(`/archives/${randomUUID()}/file`, t.url), {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    // It is opened again a second after it stopped: until then, a clear refusal.
    expect(during.errors![0].extensions).toMatchObject({
      code: 'UNAVAILABLE',
      reason: 'DATABASE_UNAVAILABLE',
      retryAfterSeconds: expect.any(Number),
    });
    expect(during.errors![0].message).not.toMatch(/thread|PGlite|wasm/i);
    expect(health.status).toBe(503);
    expect(download.status).toBe(503);
    expect(download.headers.get('retry-after')).toBe('5');
    expect(await download.json()).toEqual({
      errors: [
        {
          message: expect.stringMatching(/database cannot be reached/),
          extensions: {
            code: 'UNAVAILABLE',
            reason: 'DATABASE_UNAVAILABLE',
            retryAfterSeconds: 5,
          },
        },
      ],
    });

    // Opened again within seconds, with no restart of the service.
    let after = await send('after');
    for (let i = 0; i < 100 && after.errors; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await send('after');
    }
    expect(after.errors).toBeUndefined();
    // A retry of the send that failed is stored once, after the one acknowledged before.
    const retried = await send('during');
    expect(retried.errors).toBeUndefined();
    const turns = await t.gql<{
      conversation: {
        messages: { edges: { node: { clientMessageId: string; turnIndex: number } }[] };
      };
    }>(
      'query($c: ID!) { conversation(id: $c) { messages(first: 10) { edges { node { clientMessageId turnIndex } } } } }',
      { c: conversationId },
      owner,
    );
    const stored = turns.data!.conversation.messages.edges.map((e) => e.node);
    expect(stored[0]).toEqual({ clientMessageId: 'before', turnIndex: 0 });
    expect(stored.map((s) => s.clientMessageId).sort()).toEqual(['after', 'before', 'during']);
    expect(stored.map((s) => s.turnIndex)).toEqual([0, 1, 2]);
    expect((await fetch(t.url.replace('/graphql', '/health/ready'))).status).toBe(200);
  });
});
