import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { SearchStatsRepository } from '../../src/search/search-stats.repository.js';
import { INDEX_JOB } from '../../src/search/segment-indexer.service.js';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * A conversation held together by several members of a legacy: every turn records who said
 * it, each participant's memories come only from their own turns under their own switch,
 * facts belong to whoever said them, and the agent answers each participant with their own
 * memories and what the conversation itself shows everyone.
 */
describe('together conversations', () => {
  let t: TestApp;
  let jobs: JobsService;
  let ana: TestUser;
  let ben: TestUser;
  let cai: TestUser;
  const id = {} as Record<'ana' | 'ben' | 'cai', string>;
  let legacyId: string;
  let conversationId: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, who: TestUser) => {
    const res = await t.gql<T>(query, variables, who);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const send = (who: TestUser, content: string) =>
    ok<{ sendMessage: { message: { id: string; authorId: string }; reply: { id: string } } }>(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id authorId } reply { id } } }',
      { i: { conversationId, content } },
      who,
    );
  const memories = async (who: TestUser) =>
    (
      await ok<{ memories: { nodes: { content: string }[] } }>(
        '{ memories(first: 100) { nodes { content } } }',
        {},
        who,
      )
    ).memories.nodes.map((m) => m.content);
  const facts = async (who: TestUser) =>
    (
      await ok<{ facts: { nodes: { content: string; visibility: string }[] } }>(
        'query($l: ID!) { facts(legacyId: $l, first: 100) { nodes { content visibility } } }',
        { l: legacyId },
        who,
      )
    ).facts.nodes;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    jobs = t.app.get(JobsService);
    ana = await t.user('together-ana', { email: 'ana@together.example.com' });
    ben = await t.user('together-ben', { email: 'ben@together.example.com' });
    cai = await t.user('together-cai', { email: 'cai@together.example.com' });
    for (const [name, u] of [
      ['ana', ana],
      ['ben', ben],
      ['cai', cai],
    ] as const) {
      id[name] = (await ok<{ me: { id: string } }>('{ me { id } }', {}, u)).me.id;
    }
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Lars" }) { id } }',
        {},
        ana,
      )
    ).createLegacy.id;
    await joinLegacy(t, ana, legacyId, ben);
    await joinLegacy(t, ana, legacyId, cai);
  });
  afterAll(() => t?.close());

  it('starts with its participants, each with their own switch (others start off)', async () => {
    const { startConversation } = await ok<{
      startConversation: {
        id: string;
        remember: boolean;
        startedBy: string;
        participants: { userId: string; leftAt: string | null }[];
      };
    }>(
      `mutation($i: StartConversationInput!) { startConversation(input: $i) {
         id remember startedBy participants { userId leftAt } } }`,
      { i: { legacyId, remember: true, participantIds: [id.ben, id.cai] } },
      ana,
    );
    conversationId = startConversation.id;
    expect(startConversation.remember).toBe(true);
    expect(startConversation.startedBy).toBe(id.ana);
    expect(startConversation.participants.map((p) => p.userId).sort()).toEqual(
      [id.ana, id.ben, id.cai].sort(),
    );
    const seen = await ok<{ conversation: { remember: boolean } }>(
      'query($id: ID!) { conversation(id: $id) { remember } }',
      { id: conversationId },
      ben,
    );
    expect(seen.conversation.remember).toBe(false);
    await ok(
      'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: true) { remember } }',
      { id: conversationId },
      ben,
    );
  });

  it('refuses a participant who is not a member of the legacy, naming the field', async () => {
    const stranger = await t.user('together-stranger');
    const strangerId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, stranger)).me.id;
    const res = await t.gql(
      'mutation($i: StartConversationInput!) { startConversation(input: $i) { id } }',
      { i: { legacyId, participantIds: [strangerId] } },
      ana,
    );
    expect(res.errors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'participantIds',
    });
  });

  it('records who said each turn and streams every turn to every participant', async () => {
    const caiSees = subscribe<{ messageAdded: { content: string; authorId: string } }>(
      t.ws(cai),
      'subscription($id: ID!) { messageAdded(conversationId: $id) { content authorId } }',
      { id: conversationId },
    );
    await caiSees.ready;
    const sent = await send(ana, 'I live in Porto. Grandpa Lars was born in Oslo in 1931.');
    expect(sent.sendMessage.message.authorId).toBe(id.ana);
    await send(ben, 'I live in Bergen. Grandpa Lars worked as a ferry pilot for twelve years.');
    await send(cai, 'I live in Lima.');
    await caiSees.waitFor(6);
    const turns = caiSees.events.map((e) => e.data!.messageAdded);
    expect(turns.filter((m) => m.content.startsWith('I live in')).map((m) => m.authorId)).toEqual([
      id.ana,
      id.ben,
      id.cai,
    ]);
    // Each reply is for the participant it answers.
    expect(turns[1].authorId).toBe(id.ana);
    expect(turns[3].authorId).toBe(id.ben);
  });

  it("makes each participant's memories from their own turns only, under their own switch", async () => {
    await jobs.drain();
    const anas = await memories(ana);
    const bens = await memories(ben);
    expect(anas.join(' ')).toMatch(/Porto/);
    expect(anas.join(' ')).not.toMatch(/Bergen|Lima/);
    expect(bens.join(' ')).toMatch(/Bergen/);
    expect(bens.join(' ')).not.toMatch(/Porto|Lima/);
    // Cai never turned their switch on.
    expect(await memories(cai)).toEqual([]);
  });

  it('attributes each fact to the member who said it, private to them', async () => {
    await ok(
      'mutation($id: ID!) { summarizeNow(conversationId: $id) { unsummarizedTurns } }',
      { id: conversationId },
      ana,
    );
    await jobs.drain();
    const anas = (await facts(ana)).map((f) => f.content).join(' ');
    const bens = (await facts(ben)).map((f) => f.content).join(' ');
    expect(anas).toMatch(/Oslo/);
    expect(anas).not.toMatch(/ferry/);
    expect(bens).toMatch(/ferry/);
    expect(bens).not.toMatch(/Oslo/);
    // Summaries are the participants' to read.
    const { conversation } = await ok<{ conversation: { chunks: { content: string }[] } }>(
      'query($id: ID!) { conversation(id: $id) { chunks { content } } }',
      { id: conversationId },
      cai,
    );
    expect(conversation.chunks.length).toBeGreaterThan(0);
  });

  it("builds the context for the participant who asks: their memories, the conversation's turns", async () => {
    const contextFor = async (who: TestUser) =>
      (
        await ok<{ context: { items: { sourceType: string; text: string }[] } }>(
          'query($id: ID!) { context(conversationId: $id, query: "Where do I live?") { items { sourceType text } } }',
          { id: conversationId },
          who,
        )
      ).context.items;
    const anas = await contextFor(ana);
    const bens = await contextFor(ben);
    const memoryText = (items: { sourceType: string; text: string }[]) =>
      items
        .filter((i) => i.sourceType === 'MEMORY')
        .map((i) => i.text)
        .join(' ');
    expect(memoryText(anas)).toMatch(/Porto/);
    expect(memoryText(anas)).not.toMatch(/Bergen/);
    expect(memoryText(bens)).toMatch(/Bergen/);
    expect(memoryText(bens)).not.toMatch(/Porto/);
  });

  it('shows what a reply was given only to the participant it answered', async () => {
    const sent = await send(ana, 'Where do I live?');
    const generation = async (who: TestUser) =>
      (
        await ok<{
          conversation: { messages: { nodes: { id: string; generation: unknown }[] } };
        }>(
          'query($id: ID!) { conversation(id: $id) { messages(last: 5) { nodes { id generation { model } } } } }',
          { id: conversationId },
          who,
        )
      ).conversation.messages.nodes.find((n) => n.id === sent.sendMessage.reply.id)!.generation;
    expect(await generation(ana)).not.toBeNull();
    expect(await generation(ben)).toBeNull();
  });

  it('lets another member in, and lets a participant leave with what was said until then', async () => {
    const dee = await t.user('together-dee', { email: 'dee@together.example.com' });
    await joinLegacy(t, ana, legacyId, dee);
    const deeId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, dee)).me.id;
    await ok(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId, userId: deeId } },
      ben,
    );
    const { conversation } = await ok<{ conversation: { messageCount: number } }>(
      'query($id: ID!) { conversation(id: $id) { messageCount } }',
      { id: conversationId },
      dee,
    );
    expect(conversation.messageCount).toBeGreaterThan(0);
    const { leaveConversation } = await ok<{
      leaveConversation: { readableUntilTurn: number; messageCount: number };
    }>(
      'mutation($id: ID!) { leaveConversation(conversationId: $id) { readableUntilTurn messageCount } }',
      { id: conversationId },
      cai,
    );
    expect(leaveConversation.readableUntilTurn).toBe(leaveConversation.messageCount);
    await send(ana, 'Something said after Cai left.');
    const after = await ok<{
      conversation: {
        messageCount: number;
        participants: { userId: string }[];
        messages: { nodes: { content: string }[] };
      };
    }>(
      'query($id: ID!) { conversation(id: $id) { messageCount participants { userId } messages(first: 100) { nodes { content } } } }',
      { id: conversationId },
      cai,
    );
    expect(after.conversation.messageCount).toBe(leaveConversation.messageCount);
    expect(JSON.stringify(after)).not.toContain('after Cai left');
    // Dee joined before Cai left; the one who left sees who took part then.
    expect(after.conversation.participants.map((p) => p.userId)).toContain(deeId);
    // The list shows each conversation as its viewer may read it, as the single query does.
    const listed = await ok<{
      conversations: {
        nodes: {
          id: string;
          messageCount: number;
          participants: { userId: string }[];
          messages: { nodes: { content: string }[] };
        }[];
      };
    }>(
      'query($l: ID!) { conversations(legacyId: $l, first: 5) { nodes { id messageCount participants { userId } messages(first: 40) { nodes { content } } } } }',
      { l: legacyId },
      cai,
    );
    const mine = listed.conversations.nodes.find((n) => n.id === conversationId)!;
    expect(mine).toEqual({ id: conversationId, ...after.conversation });
    const anaList = await ok<{
      conversations: { nodes: { id: string; messages: { nodes: { content: string }[] } }[] };
    }>(
      'query($l: ID!) { conversations(legacyId: $l, first: 5) { nodes { id messages(last: 1) { nodes { content } } } } }',
      { l: legacyId },
      ana,
    );
    expect(
      anaList.conversations.nodes.find((n) => n.id === conversationId)!.messages.nodes,
    ).not.toEqual([]);
    expect(JSON.stringify(anaList)).toContain('after Cai left');
  });

  it("keeps one participant's memories out of what the others read: notices and memory commands", async () => {
    await ok(
      'mutation($i: RememberThisInput!) { rememberThis(input: $i) { memory { id } } }',
      { i: { content: 'I keep three beehives behind the allotment shed.', legacyId } },
      ana,
    );
    const benSees = subscribe<{ messageAdded: { content: string; role: string } }>(
      t.ws(ben),
      'subscription($id: ID!) { messageAdded(conversationId: $id) { content role } }',
      { id: conversationId },
    );
    await benSees.ready;
    // The offline notice lists what it was given: only what the conversation shows everyone.
    await send(ana, 'Tell me about the beehives behind the shed.');
    await send(ana, 'Please remember that I am allergic to penicillin.');
    await send(ana, 'What do you remember about the beehives?');
    await benSees.waitFor(6);
    const replies = benSees.events
      .map((e) => e.data!.messageAdded)
      .filter((m) => m.role === 'ASSISTANT')
      .map((m) => m.content)
      .join('\n');
    expect(replies).not.toMatch(/three beehives|allotment/);
    expect(replies).not.toMatch(/penicillin/);
    expect(replies).toMatch(/only you see them/);
    // The command was carried out for Ana all the same.
    expect((await memories(ana)).join(' ')).toMatch(/penicillin/);
    expect((await memories(ben)).join(' ')).not.toMatch(/penicillin|beehives/);
  });

  it("refuses another participant's clientMessageId, and the agent's own ids", async () => {
    const i = { conversationId, content: 'A message with an id.', clientMessageId: 'ana-1' };
    await ok(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
      { i },
      ana,
    );
    const replayed = await t.gql(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
      { i },
      ben,
    );
    expect(replayed.errors![0].extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'CLIENT_MESSAGE_ID_REUSED',
    });
    const reserved = await t.gql(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
      { i: { conversationId, content: 'Sneaky.', clientMessageId: 'reply:anything' } },
      ben,
    );
    expect(reserved.errors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'clientMessageId',
    });
  });

  it('ends a participation when its member leaves the legacy: coming back shows nothing said meanwhile', async () => {
    const eve = await t.user('together-eve', { email: 'eve@together.example.com' });
    await joinLegacy(t, ana, legacyId, eve);
    const eveId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, eve)).me.id;
    await ok(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId, userId: eveId.toUpperCase() } },
      ana,
    );
    await ok('mutation($l: ID!) { leaveLegacy(legacyId: $l) }', { l: legacyId }, eve);
    await send(ana, 'Said while Eve was away from the family.');
    await joinLegacy(t, ana, legacyId, eve);
    const { conversation } = await ok<{
      conversation: {
        readableUntilTurn: number | null;
        messages: { nodes: { content: string }[] };
      };
    }>(
      'query($id: ID!) { conversation(id: $id) { readableUntilTurn messages(first: 100) { nodes { content } } } }',
      { id: conversationId },
      eve,
    );
    expect(conversation.readableUntilTurn).not.toBeNull();
    expect(JSON.stringify(conversation)).not.toContain('while Eve was away');
  });

  it("keeps an agent's replies made for one participant alone from those brought in later", async () => {
    const secret = /zircon|piano/i;
    await ok(
      'mutation($i: AddFactInput!) { addFact(input: $i) { id } }',
      {
        i: {
          legacyId,
          content: 'Grandpa Lars hid the zircon ring in the piano.',
          category: 'OTHER',
          visibility: 'PRIVATE',
        },
      },
      ana,
    );
    const solo = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        ana,
      )
    ).startConversation.id;
    const sendIn = (who: TestUser, content: string) =>
      ok<{ sendMessage: { reply: { id: string; content: string } } }>(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { reply { id content } } }',
        { i: { conversationId: solo, content } },
        who,
      );
    // Alone, the agent answers Ana with what only she may see (the offline notice lists it).
    const alone = await sendIn(ana, 'Where is the ring now?');
    expect(alone.sendMessage.reply.content).toMatch(secret);
    // And her own model's answer, recorded as hers (summarized, unlike the offline notice).
    const recorded = await ok<{ recordAssistantMessage: { id: string } }>(
      'mutation($i: RecordAssistantMessageInput!) { recordAssistantMessage(input: $i) { id } }',
      {
        i: {
          conversationId: solo,
          content: 'Grandpa Lars hid the zircon ring in the piano, as you noted.',
          metadata: { model: 'ana-own', note: 'zircon' },
        },
      },
      ana,
    );
    await ok(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId: solo, userId: id.ben } },
      ana,
    );
    await ok(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId: solo, userId: id.cai } },
      ben,
    );
    const read = async (who: TestUser) =>
      (
        await ok<{
          conversation: {
            messages: { nodes: { id: string; content: string; metadata: unknown }[] };
          };
        }>(
          'query($id: ID!) { conversation(id: $id) { messages(first: 20) { nodes { id content metadata } } } }',
          { id: solo },
          who,
        )
      ).conversation.messages.nodes;
    for (const who of [ben, cai]) {
      const nodes = await read(who);
      expect(nodes.map((n) => n.id)).toContain(alone.sendMessage.reply.id);
      expect(nodes.find((n) => n.id === recorded.recordAssistantMessage.id)!.metadata).toEqual({});
      expect(JSON.stringify(nodes)).not.toMatch(secret);
    }
    // Ana still reads her reply as it was written.
    expect((await read(ana)).find((n) => n.id === alone.sendMessage.reply.id)!.content).toMatch(
      secret,
    );
    // Nor does it reach another participant through the agent or the summaries.
    const benAsks = await sendIn(ben, 'What did the agent say about the ring?');
    expect(benAsks.sendMessage.reply.content).not.toMatch(secret);
    const summarized = await ok<{ summarizeNow: { chunks: { content: string }[] } }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { chunks { content } } }',
      { c: solo },
      ben,
    );
    expect(JSON.stringify(summarized)).not.toMatch(secret);
    // A summary of the turns it covers is Ana's alone to read; the others' own turns are not.
    const chunks = async (who: TestUser) =>
      JSON.stringify(
        await ok(
          'query($id: ID!) { conversation(id: $id) { chunks { content rangeStart rangeEnd } } }',
          { id: solo },
          who,
        ),
      );
    expect(await chunks(ana)).toMatch(secret);
    for (const who of [ben, cai]) {
      expect(await chunks(who)).not.toMatch(secret);
      expect(await chunks(who)).not.toMatch(/Where is the ring now/);
    }
    // Nor through the full-text statistics its scores are made with: for the others they count
    // the turns they may read, for Ana the whole conversation.
    await jobs.drain({ types: [INDEX_JOB], timeoutMs: 60_000 });
    const ds = t.app.get(DataSource);
    const stats = t.app.get(SearchStatsRepository);
    const words = 'zircon ring piano';
    const counted = async (viewer: string) => {
      const { lexemes, stats: size } = await stats.lexemeStats(
        words,
        { legacyId, userId: viewer, conversationId: solo, beforeTurn: null },
        0.5,
      );
      return { df: Object.fromEntries(lexemes.map((l) => [l.lexeme, l.dfCurrent])), size };
    };
    const recounted = async (viewer: string) => {
      const visible = `s.conversation_id = $1 AND (s.user_id = $2 OR NOT EXISTS (
          SELECT 1 FROM messages m WHERE m.id = s.message_id AND m.answered_alone))`;
      const df = await ds.query<{ lexeme: string; n: number }[]>(
        `SELECT u.lexeme, count(*)::int AS n FROM message_segments s
           CROSS JOIN LATERAL unnest(s.search_tsv || s.kinds_tsv) AS u
          WHERE ${visible} AND u.lexeme = ANY(tsvector_to_array(to_tsvector('english', $3)))
          GROUP BY u.lexeme`,
        [solo, viewer, words],
      );
      const [size] = await ds.query<{ n: number; length: number }[]>(
        `SELECT count(*)::int AS n, sum(main_length + 0.5 * context_length)::float8 AS length
           FROM message_segments s WHERE ${visible}`,
        [solo, viewer],
      );
      return { df: Object.fromEntries(df.map((r) => [r.lexeme, r.n])), size };
    };
    for (const viewer of [id.ana, id.ben, id.cai]) {
      const got = await counted(viewer);
      const want = await recounted(viewer);
      for (const lexeme of Object.keys(got.df)) expect(got.df[lexeme]).toBe(want.df[lexeme] ?? 0);
      expect([got.size.segmentsCurrent, got.size.lengthCurrent]).toEqual([
        want.size.n,
        want.size.length,
      ]);
    }
    // The scenario: the reply made for Ana alone holds the secret, and only she counts it.
    expect((await counted(id.ana)).df.zircon).toBeGreaterThan((await counted(id.ben)).df.zircon);

    // Whom a reply was made for is part of the immutable log: it cannot be unmarked.
    for (const change of [
      'answered_alone = false',
      'user_id = $2::uuid',
      'legacy_id = gen_random_uuid()',
    ]) {
      await expect(
        ds.query(`UPDATE messages SET ${change} WHERE id = $1 AND $2::uuid IS NOT NULL`, [
          alone.sendMessage.reply.id,
          id.ben,
        ]),
      ).rejects.toThrow('messages are immutable');
    }
    expect((await read(ben)).find((n) => n.id === alone.sendMessage.reply.id)!.content).not.toMatch(
      secret,
    );
  });

  it('names each participant in the offline notice everyone reads, and quotes no reply made for one of them alone', async () => {
    for (const [who, name] of [
      [ana, 'Ana'],
      [ben, 'Ben'],
    ] as const) {
      await ok(
        'mutation($n: String!) { updateMe(input: { displayName: $n }) { id } }',
        { n: name },
        who,
      );
    }
    await ok(
      'mutation($i: AddFactInput!) { addFact(input: $i) { id } }',
      {
        i: {
          legacyId,
          content: 'Grandpa Lars buried the silver compass under the pear tree.',
          category: 'OTHER',
          visibility: 'PRIVATE',
        },
      },
      ana,
    );
    const started = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        ana,
      )
    ).startConversation.id;
    const sendIn = (who: TestUser, content: string) =>
      ok<{ sendMessage: { reply: { content: string } } }>(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { reply { content } } }',
        { i: { conversationId: started, content } },
        who,
      );
    // Alone, her reply may list her private fact, and her own model's answer, recorded as
    // hers, may say it: both are made for her alone.
    const alone = await sendIn(ana, 'Where did Grandpa bury the compass?');
    expect(alone.sendMessage.reply.content).toMatch(/silver compass/);
    await ok(
      'mutation($i: RecordAssistantMessageInput!) { recordAssistantMessage(input: $i) { id } }',
      { i: { conversationId: started, content: 'The silver compass is under the pear tree.' } },
      ana,
    );
    await ok(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId: started, userId: id.ben } },
      ana,
    );
    await sendIn(ben, 'Ben here: I remember the pear tree.');
    // A summary of the turns so far covers her reply too: hers alone to read, as it is.
    const summary = await ok<{ summarizeNow: { chunks: { content: string }[] } }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { chunks { content } } }',
      { c: started },
      ana,
    );
    expect(JSON.stringify(summary)).toMatch(/silver compass/);
    const notice = (await sendIn(ana, 'Ana again: shall we plant another one?')).sendMessage.reply
      .content;
    // Read by Ben too: each turn under its speaker's name, and nothing made for Ana alone.
    expect(notice).toContain('- "Ben": Ben here: I remember the pear tree.');
    expect(notice).toContain('- "Ana": Ana again: shall we plant another one?');
    expect(notice).not.toMatch(/- You:/);
    expect(notice).not.toMatch(/silver compass/);
  });
});

describe('the offline notice of a together conversation longer than the recent window', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      // Two turns verbatim: what came before reaches the notice through summaries and search.
      CONTEXT_RECENT_TURNS: '2',
    });
  }, 120_000);
  afterAll(() => t?.close());

  it('quotes no summary or turn that holds a reply made for the writer alone', async () => {
    const ok = async <T>(query: string, variables: Record<string, unknown>, who: TestUser) => {
      const res = await t.gql<T>(query, variables, who);
      expect(res.errors).toBeUndefined();
      return res.data!;
    };
    const ana = await t.user('window-ana', { email: 'ana@window.example.com', name: 'Ana' });
    const ben = await t.user('window-ben', { email: 'ben@window.example.com', name: 'Ben' });
    const benId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, ben)).me.id;
    const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Lars" }) { id } }',
      {},
      ana,
    );
    await joinLegacy(t, ana, createLegacy.id, ben);
    const { startConversation } = await ok<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: createLegacy.id },
      ana,
    );
    const conversationId = startConversation.id;
    const send = async (who: TestUser, content: string) =>
      (
        await ok<{ sendMessage: { reply: { content: string } } }>(
          'mutation($i: SendMessageInput!) { sendMessage(input: $i) { reply { content } } }',
          { i: { conversationId, content } },
          who,
        )
      ).sendMessage.reply.content;
    await send(ana, 'Where did Grandpa bury the compass?');
    await ok(
      'mutation($i: RecordAssistantMessageInput!) { recordAssistantMessage(input: $i) { id } }',
      { i: { conversationId, content: 'The silver compass is under the pear tree.' } },
      ana,
    );
    await ok(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId, userId: benId } },
      ana,
    );
    await send(ben, 'Ben here: I remember the pear tree.');
    await send(ben, 'And the apples in the orchard.');
    // Summed up with the turns around it: the summary is Ana's alone to read.
    const summary = await ok<{ summarizeNow: { chunks: { content: string }[] } }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { chunks { content } } }',
      { c: conversationId },
      ana,
    );
    expect(JSON.stringify(summary)).toMatch(/silver compass/);
    await send(ben, 'The orchard was big.');
    const notice = await send(ana, 'Where is the compass under the pear tree now?');
    expect(notice).toContain('- "Ana": Where is the compass under the pear tree now?');
    expect(notice).not.toMatch(/silver compass/);
  });
});
