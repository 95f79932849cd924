import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import {
  createLegacy,
  listMemories,
  ok,
  rememberThis,
  signIn,
  startConversation,
} from '../integration/memories-fixtures.js';

const CHANGED = `subscription {
  memoryChanged { action memoryIds undoUntil at memory { id content status restorableUntil } }
}`;

interface Change {
  memoryChanged: {
    action: string;
    memoryIds: string[];
    undoUntil: string | null;
    at: string;
    memory: { id: string; content: string; status: string; restorableUntil: string | null } | null;
  };
}

const SEND = `mutation($input: SendMessageInput!) {
  sendMessage(input: $input) {
    message { id }
    reply { id content usedMemories { id content referenceCount } }
  }
}`;

interface Sent {
  sendMessage: {
    message: { id: string };
    reply: { id: string; content: string; usedMemories: { id: string; content: string }[] };
  };
}

/**
 * Memories through the running service, as the frontend sees them: saves announced over
 * WebSocket with an undo, extraction by the background worker after the agent's reply, the
 * memories given to the next reply, search, and pausing.
 */
describe('Memories over HTTP and WebSocket', () => {
  let t: TestApp;
  let alice: TestUser & { id: string };
  let bob: TestUser & { id: string };
  let conversationId: string;
  let bobEvents: ReturnType<typeof subscribe<Change>>;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_POLL_MS: '50' });
    alice = await signIn(t, 'e2e-alice');
    bob = await signIn(t, 'e2e-bob');
    const legacyId = await createLegacy(t, alice);
    conversationId = await startConversation(t, alice, legacyId, true);
    bobEvents = subscribe<Change>(t.ws(bob), CHANGED);
    await bobEvents.ready;
  });
  afterAll(() => t.close());

  it('announces a save with an undo, the undo itself and the restore', async () => {
    const events = subscribe<Change>(t.ws(alice), CHANGED);
    await events.ready;
    const saved = await rememberThis(t, alice, 'I take the train to work.');
    await events.waitFor(1);
    expect(events.events[0].data!.memoryChanged).toMatchObject({
      action: 'SAVED',
      memoryIds: [saved.memory.id],
      undoUntil: null,
      memory: { id: saved.memory.id, content: 'I take the train to work.', status: 'ACTIVE' },
    });

    const undone = ok(
      await t.gql<{ forgetMemory: { restorableUntil: string } }>(
        'mutation($id: ID!) { forgetMemory(id: $id) { restorableUntil } }',
        { id: saved.memory.id },
        alice,
      ),
    );
    await events.waitFor(2);
    expect(events.events[1].data!.memoryChanged).toMatchObject({
      action: 'FORGOTTEN',
      memoryIds: [saved.memory.id],
      undoUntil: undone.forgetMemory.restorableUntil,
      memory: { status: 'DELETED' },
    });
    const days =
      (Date.parse(undone.forgetMemory.restorableUntil) - Date.now()) / (24 * 3600 * 1000);
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);

    ok(
      await t.gql(
        'mutation($id: ID!) { restoreMemory(id: $id) { id } }',
        { id: saved.memory.id },
        alice,
      ),
    );
    await events.waitFor(3);
    expect(events.events[2].data!.memoryChanged).toMatchObject({
      action: 'RESTORED',
      memory: { status: 'ACTIVE', restorableUntil: null },
    });

    // A restatement is an update of the memory already held, not a new one.
    await rememberThis(t, alice, 'I take the train to work!');
    await events.waitFor(4);
    expect(events.events[3].data!.memoryChanged).toMatchObject({
      action: 'UPDATED',
      memoryIds: [saved.memory.id],
    });
    events.unsubscribe();
  });

  it("remembers from the user's turns after the agent's reply, and gives those memories to the next reply", async () => {
    const events = subscribe<Change>(t.ws(alice), CHANGED);
    await events.ready;
    const first = ok(
      await t.gql<Sent>(
        SEND,
        {
          input: {
            conversationId,
            content: 'I live in Porto. My sister Anna has a garden full of roses.',
          },
        },
        alice,
      ),
    );
    expect(first.sendMessage.reply.content.length).toBeGreaterThan(0);
    await events.waitFor(2, 15_000);
    const saved = events.events.map((e) => e.data!.memoryChanged);
    expect(saved.every((c) => c.action === 'SAVED')).toBe(true);
    expect(saved.map((c) => c.memory!.content).sort()).toEqual([
      'I live in Porto.',
      "The user's sister is named Anna.",
    ]);
    const porto = saved.find((c) => c.memory!.content === 'I live in Porto.')!.memory!;

    const detail = ok(
      await t.gql<{ memory: { sourceMessage: { id: string } } }>(
        'query($id: ID!) { memory(id: $id) { conversationMode sourceMessage { id } } }',
        { id: porto.id },
        alice,
      ),
    );
    expect(detail.memory).toEqual({
      conversationMode: 'AGENT',
      sourceMessage: { id: first.sendMessage.message.id },
    });

    const second = ok(
      await t.gql<Sent>(
        SEND,
        { input: { conversationId, content: 'Which city do I call home these days?' } },
        alice,
      ),
    );
    const used = second.sendMessage.reply.usedMemories;
    expect(used.map((m) => m.id)).toContain(porto.id);
    const listed = await listMemories(t, alice, { search: 'which city is my home' });
    expect(listed[0].id).toBe(porto.id);
    expect(listed[0].referenceCount).toBeGreaterThanOrEqual(1);

    const stats = ok(
      await t.gql<{ memoryStats: { repliesUsingMemories: number; replies: number } }>(
        '{ memoryStats { replies repliesUsingMemories } }',
        {},
        alice,
      ),
    );
    expect(stats.memoryStats.repliesUsingMemories).toBeGreaterThanOrEqual(1);
    expect(stats.memoryStats.replies).toBe(2);
    events.unsubscribe();
  });

  it('neither learns nor recalls while memory is paused', async () => {
    ok(
      await t.gql(
        'mutation { updateMe(input: { memoryPaused: true }) { memoryPaused } }',
        {},
        alice,
      ),
    );
    const before = await listMemories(t, alice);
    const sent = ok(
      await t.gql<Sent>(
        SEND,
        { input: { conversationId, content: 'I work as a nurse. Where do I live?' } },
        alice,
      ),
    );
    expect(sent.sendMessage.reply.usedMemories).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(await listMemories(t, alice)).toEqual(before);
    ok(await t.gql('mutation { updateMe(input: { memoryPaused: false }) { id } }', {}, alice));
  });

  it("never tells another user about someone's memories", () => {
    expect(bobEvents.events).toEqual([]);
  });
});
