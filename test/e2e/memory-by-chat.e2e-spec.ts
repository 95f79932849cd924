import type { ReplyDelta } from '../../src/agent/agent-reply.service.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import {
  codeOf,
  createLegacy,
  MEMORY_FIELDS,
  MemoryView,
  ok,
  rememberThis,
  signIn,
  startConversation,
} from '../integration/memories-fixtures.js';

const SEND = `mutation($input: SendMessageInput!) {
  sendMessage(input: $input) {
    message { id }
    reply {
      id content
      generation { model memoryActions { action memoryIds restorableUntil reason query } }
    }
  }
}`;

interface MemoryAction {
  action: string;
  memoryIds: string[];
  restorableUntil: string | null;
  reason: string | null;
  query: string | null;
}

interface Sent {
  sendMessage: {
    message: { id: string };
    reply: {
      id: string;
      content: string;
      generation: { model: string; memoryActions: MemoryAction[] };
    };
  };
}

async function say(t: TestApp, as: TestUser, conversationId: string, content: string) {
  return ok(await t.gql<Sent>(SEND, { input: { conversationId, content } }, as)).sendMessage;
}

async function memory(t: TestApp, as: TestUser, id: string): Promise<MemoryView> {
  return ok(
    await t.gql<{ memory: MemoryView }>(
      `query($id: ID!) { memory(id: $id) { ${MEMORY_FIELDS} } }`,
      { id },
      as,
    ),
  ).memory;
}

async function search(t: TestApp, as: TestUser, text: string): Promise<MemoryView[]> {
  return ok(
    await t.gql<{ memories: { nodes: MemoryView[] } }>(
      `query($f: MemoryFilter) { memories(filter: $f, first: 50) { nodes { ${MEMORY_FIELDS} } } }`,
      { f: { search: text } },
      as,
    ),
  ).memories.nodes;
}

async function setPaused(t: TestApp, as: TestUser, paused: boolean) {
  ok(
    await t.gql(
      'mutation($p: Boolean!) { updateMe(input: { memoryPaused: $p }) { id } }',
      { p: paused },
      as,
    ),
  );
}

describe('Memory by chat (offline: commands recognised by patterns)', () => {
  let t: TestApp;
  let alice: TestUser & { id: string };
  let legacyId: string;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_POLL_MS: '50' });
    alice = await signIn(t, 'chat-alice');
    legacyId = await createLegacy(t, alice);
  });
  afterAll(() => t.close());

  it('saves "remember that I ..." from the turn, streams the reply and records the action', async () => {
    const conversationId = await startConversation(t, alice, legacyId, true);
    const deltas = subscribe<{ assistantReplyDelta: ReplyDelta }>(
      t.ws(alice),
      `subscription($id: ID!) { assistantReplyDelta(conversationId: $id) { sequence text done messageId } }`,
      { id: conversationId },
    );
    await deltas.ready;
    const sent = await say(t, alice, conversationId, 'Remember that I love gardening.');
    expect(sent.reply.content).toBe(
      'Saved to your memories: "I love gardening." (Reply "don\'t remember that" to undo.)',
    );
    const [action] = sent.reply.generation.memoryActions;
    expect(action).toMatchObject({ action: 'SAVED', reason: null, restorableUntil: null });
    const saved = await memory(t, alice, action.memoryIds[0]);
    expect(saved).toMatchObject({
      content: 'I love gardening.',
      status: 'ACTIVE',
      source: 'CHAT',
      confidence: 1,
      legacyId,
      conversationId,
      sourceMessageId: sent.message.id,
    });
    await deltas.waitFor(2);
    const events = deltas.events.map((e) => e.data!.assistantReplyDelta);
    const text = events.filter((e) => !e.done).map((e) => e.text);
    expect(text.join('')).toBe(sent.reply.content);
    expect(events[events.length - 1]).toMatchObject({ done: true, messageId: sent.reply.id });
    deltas.unsubscribe();

    // The command turn is not extracted again: the memory keeps its single reference.
    await new Promise((r) => setTimeout(r, 400));
    expect((await memory(t, alice, saved.id)).referenceCount).toBe(saved.referenceCount);

    const zh = await say(t, alice, conversationId, '请记住我喜欢喝茶');
    expect(zh.reply.content).toBe('好的，我记住了：“我喜欢喝茶”。（说“别记住这个”即可撤销。）');
    expect(
      (await memory(t, alice, zh.reply.generation.memoryActions[0].memoryIds[0])).content,
    ).toBe('我喜欢喝茶');
  });

  it('answers an ordinary sentence with "remember" as any other turn', async () => {
    const conversationId = await startConversation(t, alice, legacyId, true);
    const sent = await say(t, alice, conversationId, 'I remember the beach at Nazaré.');
    expect(sent.reply.content).toMatch(/running without a language model/i);
    expect(sent.reply.generation.memoryActions).toEqual([]);
  });

  it('saves nothing, and says so, with the remember switch off or memory paused', async () => {
    const off = await startConversation(t, alice, legacyId, false);
    const refused = await say(t, alice, off, 'Please remember that I hate onions');
    expect(refused.reply.content).toMatch(
      /switched off for this conversation, so nothing was saved/,
    );
    expect(refused.reply.generation.memoryActions).toEqual([
      {
        action: 'NOT_SAVED',
        memoryIds: [],
        restorableUntil: null,
        reason: 'REMEMBER_OFF',
        query: null,
      },
    ]);

    const on = await startConversation(t, alice, legacyId, true);
    await setPaused(t, alice, true);
    try {
      const paused = await say(t, alice, on, 'Remember that I hate onions.');
      expect(paused.reply.content).toMatch(/memory is paused, so nothing was saved/);
      expect(paused.reply.generation.memoryActions[0]).toMatchObject({
        action: 'NOT_SAVED',
        reason: 'MEMORY_PAUSED',
      });
      const zh = await say(t, alice, on, '记住我讨厌洋葱');
      expect(zh.reply.content).toMatch(/暂停/);
    } finally {
      await setPaused(t, alice, false);
    }
    expect(await search(t, alice, 'onions')).toEqual([]);
  });

  it('forgets what was said about something, lists it and lets it be restored', async () => {
    const conversationId = await startConversation(t, alice, legacyId, true);
    const saved = await rememberThis(t, alice, 'I collect old maps.', { legacyId });
    const sent = await say(t, alice, conversationId, 'Forget what I said about old maps');
    const [action] = sent.reply.generation.memoryActions;
    expect(action).toMatchObject({ action: 'FORGOTTEN', query: 'old maps' });
    expect(action.memoryIds).toEqual([saved.memory.id]);
    expect(sent.reply.content).toContain(`- "I collect old maps."`);
    expect(sent.reply.content).toMatch(/You can restore it until .* \(restoreMemory\)/);
    const forgotten = await memory(t, alice, saved.memory.id);
    expect(forgotten.status).toBe('DELETED');
    expect(forgotten.restorableUntil).toBe(action.restorableUntil);

    const restored = ok(
      await t.gql<{ restoreMemory: { status: string } }>(
        'mutation($id: ID!) { restoreMemory(id: $id) { status } }',
        { id: saved.memory.id },
        alice,
      ),
    );
    expect(restored.restoreMemory.status).toBe('ACTIVE');

    const vague = await say(t, alice, conversationId, 'Forget what I said about me');
    expect(vague.reply.generation.memoryActions[0].memoryIds).toEqual([]);
    expect((await memory(t, alice, saved.memory.id)).status).toBe('ACTIVE');

    const none = await say(t, alice, conversationId, 'Forget what I said about submarines.');
    expect(none.reply.content).toMatch(/couldn't find any memories about "submarines"/);
    expect(none.reply.generation.memoryActions[0]).toMatchObject({
      action: 'FORGOTTEN',
      memoryIds: [],
    });
  });

  it('"don\'t remember that" forgets what was saved from the previous turn', async () => {
    const conversationId = await startConversation(t, alice, legacyId, true);
    const first = await say(t, alice, conversationId, 'Remember that I have two cats.');
    const id = first.reply.generation.memoryActions[0].memoryIds[0];
    const undo = await say(t, alice, conversationId, "Don't remember that");
    expect(undo.reply.generation.memoryActions[0]).toMatchObject({
      action: 'FORGOTTEN',
      memoryIds: [id],
      query: null,
    });
    expect((await memory(t, alice, id)).status).toBe('DELETED');
    const zh = await say(t, alice, conversationId, '别记住这个');
    expect(zh.reply.content).toMatch(/上一条消息没有留下任何记忆/);
  });

  it('answers "what do you remember about X?" from recall', async () => {
    const conversationId = await startConversation(t, alice, legacyId, true);
    const saved = await rememberThis(t, alice, 'I play the cello on Sundays.', { legacyId });
    const sent = await say(t, alice, conversationId, 'What do you remember about the cello?');
    expect(sent.reply.content).toContain('Here is what I remember about "the cello":');
    expect(sent.reply.content).toContain('- Memory: I play the cello on Sundays.');
    expect(sent.reply.generation.memoryActions[0]).toMatchObject({
      action: 'LOOKED_UP',
      query: 'the cello',
    });
    expect(sent.reply.generation.memoryActions[0].memoryIds).toContain(saved.memory.id);
  });
});

describe('Memory by chat (a language model calling the memory tools)', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let carol: TestUser & { id: string };
  let legacyId: string;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      MODEL_MAX_RETRIES: '1',
      MODEL_RETRY_BASE_MS: '1',
      MODEL_TIMEOUT_MS: '2000',
    });
    carol = await signIn(t, 'chat-carol');
    legacyId = await createLegacy(t, carol);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('offers the tools, runs memory_save, feeds the result back and stores the final reply', async () => {
    const conversationId = await startConversation(t, carol, legacyId, true);
    fake.enqueue(
      'chat',
      reply.toolCalls({ name: 'memory_save', arguments: { content: 'I love sailing.' } }),
    );
    const sent = await say(t, carol, conversationId, 'Please keep in mind I love sailing');
    const [action] = sent.reply.generation.memoryActions;
    expect(action.action).toBe('SAVED');
    const saved = await memory(t, carol, action.memoryIds[0]);
    expect(saved).toMatchObject({ content: 'I love sailing.', source: 'CHAT', status: 'ACTIVE' });
    expect(sent.reply.content).toMatch(/^Fake reply after tools: /);
    expect(sent.reply.content).toContain('"saved":true');

    const [first, second] = fake.requestsFor('chat');
    expect(first.body.stream).toBe(true);
    expect(first.body.tools!.map((tool) => tool.function.name)).toEqual([
      'memory_save',
      'memory_forget',
      'memory_lookup',
    ]);
    const messages = second.body.messages!;
    const call = messages[messages.length - 2];
    const result = messages[messages.length - 1];
    expect(call).toMatchObject({
      role: 'assistant',
      tool_calls: [{ function: { name: 'memory_save' } }],
    });
    expect(result).toMatchObject({ role: 'tool', tool_call_id: call.tool_calls![0].id });
    expect(JSON.parse(result.content!)).toMatchObject({
      saved: true,
      memory: { id: saved.id, content: 'I love sailing.' },
    });
  });

  it('carries out a save the model answered without calling its tool', async () => {
    const conversationId = await startConversation(t, carol, legacyId, true);
    // What both real models did in issue 38: a friendly answer, no tool call.
    fake.enqueue('chat', reply.content("Green is a lovely colour! I'll remember that."));
    const sent = await say(t, carol, conversationId, 'Remember that my favourite colour is green.');
    expect(fake.requestsFor('chat')[0].body.tools).toBeDefined();
    const [action] = sent.reply.generation.memoryActions;
    expect(action.action).toBe('SAVED');
    expect((await memory(t, carol, action.memoryIds[0])).content).toMatch(
      /favourite colour is green/,
    );
    // The model's words, then what was done.
    expect(sent.reply.content.startsWith("Green is a lovely colour! I'll remember that.")).toBe(
      true,
    );
    expect(sent.reply.content.split('\n\n').length).toBeGreaterThan(1);
  });

  it('forgets by ids and looks up through the tools, on the user’s own memories only', async () => {
    const conversationId = await startConversation(t, carol, legacyId, true);
    const mine = await rememberThis(t, carol, 'I grew up in Leeds.', { legacyId });
    const dave = await signIn(t, 'chat-dave');
    const theirs = await rememberThis(t, dave, 'I grew up in York.');
    fake.enqueue(
      'chat',
      reply.toolCalls(
        { name: 'memory_lookup', arguments: { query: 'Leeds' } },
        { name: 'memory_forget', arguments: { memoryIds: [mine.memory.id, theirs.memory.id] } },
      ),
    );
    const sent = await say(t, carol, conversationId, 'Forget where I grew up');
    const actions = sent.reply.generation.memoryActions;
    expect(actions.map((a) => a.action)).toEqual(['LOOKED_UP', 'FORGOTTEN']);
    expect(actions[0].memoryIds).toContain(mine.memory.id);
    expect(actions[1].memoryIds).toEqual([mine.memory.id]);
    expect(actions[1].restorableUntil).not.toBeNull();
    expect((await memory(t, carol, mine.memory.id)).status).toBe('DELETED');
    expect((await memory(t, dave, theirs.memory.id)).status).toBe('ACTIVE');
  });

  it('answers invalid arguments with the problem and refuses a save without consent', async () => {
    const off = await startConversation(t, carol, legacyId, false);
    fake.enqueue(
      'chat',
      reply.toolCalls(
        { name: 'memory_save', arguments: '{"content": 5}' },
        { name: 'memory_forget', arguments: { query: 'x', previousTurn: true } },
        { name: 'memory_save', arguments: { content: 'I hate jazz.' } },
      ),
    );
    const sent = await say(t, carol, off, 'Remember that I hate jazz');
    const results = fake
      .requestsFor('chat')[1]
      .body.messages!.filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(m.content!) as Record<string, unknown>);
    expect(results[0].error).toMatch(/Invalid arguments: \$\.content: expected a string/);
    expect(results[1].error).toMatch(/exactly one of query, memoryIds or previousTurn/);
    expect(results[2]).toMatchObject({ saved: false, reason: 'REMEMBER_OFF' });
    expect(sent.reply.generation.memoryActions).toEqual([
      {
        action: 'NOT_SAVED',
        memoryIds: [],
        restorableUntil: null,
        reason: 'REMEMBER_OFF',
        query: null,
      },
    ]);
    expect(await search(t, carol, 'jazz')).toEqual([]);
  });
});

describe('Memory by chat with a model but AGENT_MEMORY_TOOLS=off', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      AGENT_MEMORY_TOOLS: 'off',
      MODEL_TIMEOUT_MS: '2000',
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('offers no tools and recognises the commands by their patterns instead', async () => {
    const gina = await signIn(t, 'chat-gina');
    const conversationId = await startConversation(t, gina, await createLegacy(t, gina), true);
    const ordinary = await say(t, gina, conversationId, 'Tell me about his garden.');
    expect(ordinary.reply.content).toMatch(/fake reply/);
    expect(fake.requestsFor('chat')[0].body.tools).toBeUndefined();

    const before = fake.requestsFor('chat').length;
    const sent = await say(t, gina, conversationId, 'Remember that I grow tomatoes.');
    expect(sent.reply.content).toMatch(/^Saved to your memories: "I grow tomatoes\."/);
    expect(sent.reply.generation).toMatchObject({ model: 'openai:fake-chat' });
    expect(
      (await memory(t, gina, sent.reply.generation.memoryActions[0].memoryIds[0])).status,
    ).toBe('ACTIVE');
    // The command was answered without asking the model.
    const replies = fake
      .requestsFor('chat')
      .slice(before)
      .filter((r) => r.body.stream);
    expect(replies).toEqual([]);
  });
});

describe('recordAssistantMessage with what the client’s model used', () => {
  let t: TestApp;
  let erin: TestUser & { id: string };
  let frank: TestUser & { id: string };
  let conversationId: string;

  const RECORD = `mutation($input: RecordAssistantMessageInput!) {
    recordAssistantMessage(input: $input) { id usedMemories { id referenceCount } }
  }`;

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off' });
    erin = await signIn(t, 'record-erin');
    frank = await signIn(t, 'record-frank');
    const legacyId = await createLegacy(t, erin);
    conversationId = await startConversation(t, erin, legacyId, true);
  });
  afterAll(() => t.close());

  async function recordTurn(input: Record<string, unknown>, as: TestUser = erin) {
    return t.gql<{
      recordAssistantMessage: {
        id: string;
        usedMemories: { id: string; referenceCount: number }[];
      };
    }>(RECORD, { input: { conversationId, ...input } }, as);
  }

  async function messageCount() {
    return ok(
      await t.gql<{ conversation: { messageCount: number } }>(
        'query($id: ID!) { conversation(id: $id) { messageCount } }',
        { id: conversationId },
        erin,
      ),
    ).conversation.messageCount;
  }

  it('records the used memories and counts one reference each, once per turn', async () => {
    const a = await rememberThis(t, erin, 'I run on Tuesdays.');
    const b = await rememberThis(t, erin, 'I like green tea.');
    const before = [a.memory.referenceCount, b.memory.referenceCount];
    const res = ok(
      await recordTurn({
        content: 'You run on Tuesdays and like green tea.',
        clientMessageId: 'own-model-1',
        usedMemoryIds: [a.memory.id],
        usedItemIds: [`MEMORY:${b.memory.id}`],
      }),
    );
    expect(res.recordAssistantMessage.usedMemories.map((m) => m.id).sort()).toEqual(
      [a.memory.id, b.memory.id].sort(),
    );
    expect((await memory(t, erin, a.memory.id)).referenceCount).toBe(before[0] + 1);
    expect((await memory(t, erin, b.memory.id)).referenceCount).toBe(before[1] + 1);

    // A retry returns the same turn and counts nothing twice.
    const again = ok(
      await recordTurn({
        content: 'You run on Tuesdays and like green tea.',
        clientMessageId: 'own-model-1',
        usedMemoryIds: [a.memory.id],
      }),
    );
    expect(again.recordAssistantMessage.id).toBe(res.recordAssistantMessage.id);
    expect((await memory(t, erin, a.memory.id)).referenceCount).toBe(before[0] + 1);

    // Also after a memory it used was forgotten: the retry is answered with the stored turn.
    ok(
      await t.gql('mutation($id: ID!) { forgetMemory(id: $id) { id } }', { id: b.memory.id }, erin),
    );
    const later = ok(
      await recordTurn({
        content: 'You run on Tuesdays and like green tea.',
        clientMessageId: 'own-model-1',
        usedItemIds: [`MEMORY:${b.memory.id}`],
      }),
    );
    expect(later.recordAssistantMessage.id).toBe(res.recordAssistantMessage.id);
    ok(
      await t.gql(
        'mutation($id: ID!) { restoreMemory(id: $id) { id } }',
        { id: b.memory.id },
        erin,
      ),
    );

    const stats = ok(
      await t.gql<{
        memoryStats: { replies: number; repliesUsingMemories: number; replyMemoryShare: number };
      }>('{ memoryStats { replies repliesUsingMemories replyMemoryShare } }', {}, erin),
    );
    expect(stats.memoryStats).toEqual({ replies: 1, repliesUsingMemories: 1, replyMemoryShare: 1 });
  });

  it('refuses memories that are not the user’s own and active, and items they may not see, writing nothing', async () => {
    const mine = await rememberThis(t, erin, 'I sing in a choir.');
    const theirs = await rememberThis(t, frank, 'I sing in a band.');
    const gone = await rememberThis(t, erin, 'I once lived in Oslo.');
    ok(
      await t.gql(
        'mutation($id: ID!) { forgetMemory(id: $id) { id } }',
        { id: gone.memory.id },
        erin,
      ),
    );
    const count = await messageCount();

    for (const [input, field] of [
      [{ usedMemoryIds: [mine.memory.id, theirs.memory.id] }, 'usedMemoryIds'],
      [{ usedMemoryIds: [gone.memory.id] }, 'usedMemoryIds'],
      [{ usedItemIds: [`MEMORY:${theirs.memory.id}`] }, 'usedItemIds'],
      [{ usedItemIds: [`FACT:${theirs.memory.id}`] }, 'usedItemIds'],
      [{ usedItemIds: [`TURN:${mine.memory.id}`] }, 'usedItemIds'],
    ] as const) {
      const res = await recordTurn({ content: 'An answer.', ...input });
      expect(codeOf(res)).toBe('BAD_USER_INPUT');
      expect(res.errors![0].extensions!.field).toBe(field);
      expect(res.errors![0].message).not.toContain('band');
    }
    const malformed = await recordTurn({ content: 'An answer.', usedItemIds: ['MEMORY'] });
    expect(codeOf(malformed)).toBe('BAD_USER_INPUT');
    expect(await messageCount()).toBe(count);
    expect((await memory(t, erin, mine.memory.id)).referenceCount).toBe(mine.memory.referenceCount);
  });
});
