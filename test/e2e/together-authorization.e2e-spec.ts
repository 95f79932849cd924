import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * The authorization matrix for a together conversation: three participants (the starter, one
 * taking part, one who left) and a member of the legacy who is not in it, beside an outsider
 * and an anonymous caller, for every operation and subscription on a conversation. What was
 * said after the third participant left never reaches them; nothing reaches the others.
 */

type Caller =
  'anonymous' | 'outsider' | 'nonParticipant' | 'leftParticipant' | 'participant' | 'starter';
type Code = 'OK' | 'UNAUTHENTICATED' | 'NOT_FOUND' | 'FORBIDDEN' | 'CONFLICT';
const CALLERS: Caller[] = [
  'anonymous',
  'outsider',
  'nonParticipant',
  'leftParticipant',
  'participant',
  'starter',
];

interface Fixture {
  conversationId: string;
  /** Said after leftParticipant left: never theirs to read. */
  afterLeaving: string;
  /** Said while everyone took part. */
  before: string;
}

interface Operation {
  authorizes: string;
  query: string;
  variables: (f: Fixture, ids: Record<Caller, string>) => Record<string, unknown>;
  /** Outcomes for anonymous, outsider, nonParticipant, leftParticipant, participant, starter. */
  codes: [Code, Code, Code, Code, Code, Code];
  /** Changes the conversation when allowed: allowed rows get a fixture of their own. */
  fresh?: boolean;
}

const UNAUTH = 'UNAUTHENTICATED';
const NF = 'NOT_FOUND';

const operations: Operation[] = [
  {
    authorizes: 'conversation',
    query:
      'query($id: ID!) { conversation(id: $id) { id readableUntilTurn messageCount participants { userId } messages(first: 50) { nodes { content authorId } } } }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, 'OK', 'OK', 'OK'],
  },
  {
    authorizes: 'sendMessage',
    query: 'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id authorId } } }',
    variables: (f) => ({ i: { conversationId: f.conversationId, content: 'Another word.' } }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
  },
  {
    authorizes: 'recordAssistantMessage',
    query:
      'mutation($i: RecordAssistantMessageInput!) { recordAssistantMessage(input: $i) { id } }',
    variables: (f) => ({ i: { conversationId: f.conversationId, content: 'A reply.' } }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
  },
  {
    authorizes: 'setConversationRemember',
    query:
      'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: true) { remember } }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
  },
  {
    authorizes: 'summarizeNow',
    query: 'mutation($id: ID!) { summarizeNow(conversationId: $id) { unsummarizedTurns } }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
  },
  {
    authorizes: 'context',
    query:
      'query($id: ID!) { context(conversationId: $id, query: "what was said") { items { text } } }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
  },
  {
    authorizes: 'retrievalDebug',
    query:
      'query($id: ID!) { retrievalDebug(conversationId: $id, query: "what was said") { candidates { text } } }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
  },
  {
    authorizes: 'addConversationParticipant',
    query:
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { participants { userId } } }',
    variables: (f, ids) => ({
      i: { conversationId: f.conversationId, userId: ids.nonParticipant },
    }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'OK'],
    fresh: true,
  },
  {
    authorizes: 'leaveConversation',
    query: 'mutation($id: ID!) { leaveConversation(conversationId: $id) { readableUntilTurn } }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, NF, 'OK', 'CONFLICT'],
    fresh: true,
  },
  {
    authorizes: 'deleteConversation',
    query: 'mutation($id: ID!) { deleteConversation(id: $id) }',
    variables: (f) => ({ id: f.conversationId }),
    codes: [UNAUTH, NF, NF, 'FORBIDDEN', 'FORBIDDEN', 'OK'],
    fresh: true,
  },
];

describe('together conversation authorization', () => {
  let t: TestApp;
  let ds: DataSource;
  let legacyId: string;
  const users = {} as Record<Exclude<Caller, 'anonymous'>, TestUser>;
  const ids = {} as Record<Caller, string>;
  let shared: Fixture;

  const as = (c: Caller) => (c === 'anonymous' ? null : users[c]);
  const ok = async <T>(query: string, variables: Record<string, unknown>, who: TestUser) => {
    const res = await t.gql<T>(query, variables, who);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const send = (who: TestUser, conversationId: string, content: string) =>
    ok(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
      { i: { conversationId, content } },
      who,
    );

  async function fixture(): Promise<Fixture> {
    const tag = randomUUID().slice(0, 8);
    const { startConversation } = await ok<{ startConversation: { id: string } }>(
      'mutation($i: StartConversationInput!) { startConversation(input: $i) { id } }',
      {
        i: {
          legacyId,
          title: `Sunday lunch ${tag}`,
          participantIds: [ids.participant, ids.leftParticipant],
        },
      },
      users.starter,
    );
    const conversationId = startConversation.id;
    const before = `Before anyone left ${tag}: Grandpa carved the chicken.`;
    await send(users.starter, conversationId, before);
    await send(users.leftParticipant, conversationId, `I will go soon ${tag}.`);
    await ok(
      'mutation($id: ID!) { leaveConversation(conversationId: $id) { id } }',
      { id: conversationId },
      users.leftParticipant,
    );
    const afterLeaving = `AFTER-LEAVING-${tag}`;
    await send(users.participant, conversationId, `${afterLeaving} the pudding recipe`);
    await t.app.get(JobsService).drain();
    return { conversationId, afterLeaving, before };
  }

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    for (const c of CALLERS) {
      if (c === 'anonymous') continue;
      users[c] = await t.user(`together-${c}`, { email: `${c}@together.example.com` });
      ids[c] = (await ok<{ me: { id: string } }>('{ me { id } }', {}, users[c])).me.id;
    }
    const owner = await t.user('together-owner', { email: 'owner@together.example.com' });
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Lars" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    for (const c of ['starter', 'participant', 'leftParticipant', 'nonParticipant'] as const) {
      await joinLegacy(t, owner, legacyId, users[c]);
    }
    shared = await fixture();
  });
  afterAll(() => t?.close());

  const rows = operations.flatMap((op) =>
    CALLERS.map((caller, i) => ({ ...op, caller, code: op.codes[i] })),
  );

  it.each(rows)('$authorizes as $caller: $code', async (row) => {
    const f = row.fresh && row.code === 'OK' ? await fixture() : shared;
    const before = await ds.query(`SELECT next_turn_index FROM conversations WHERE id = $1`, [
      f.conversationId,
    ]);
    const res: GqlResponse = await t.gql(row.query, row.variables(f, ids), as(row.caller));
    if (row.code === 'OK') expect(res.errors).toBeUndefined();
    else {
      expect(res.errors![0].extensions).toMatchObject({ code: row.code });
      expect(res.data ?? null).toBeNull();
      // A refused call changes nothing.
      expect(
        await ds.query(`SELECT next_turn_index FROM conversations WHERE id = $1`, [
          f.conversationId,
        ]),
      ).toEqual(before);
    }
    const text = JSON.stringify(res);
    // What was said after they left never reaches the one who left; nothing reaches outsiders.
    if (row.caller !== 'participant' && row.caller !== 'starter') {
      expect(text).not.toContain(f.afterLeaving);
    }
    if (
      row.caller === 'anonymous' ||
      row.caller === 'outsider' ||
      row.caller === 'nonParticipant'
    ) {
      expect(text).not.toContain(f.before);
    }
  });

  it('conversations: lists it to its participants (the one who left too), not to another member', async () => {
    const listed = async (c: Caller) =>
      (
        await ok<{ conversations: { nodes: { id: string; messageCount: number }[] } }>(
          'query($l: ID!) { conversations(legacyId: $l, first: 100) { nodes { id messageCount } } }',
          { l: legacyId },
          users[c as Exclude<Caller, 'anonymous'>],
        )
      ).conversations.nodes.find((n) => n.id === shared.conversationId);
    expect(await listed('starter')).toBeDefined();
    expect(await listed('participant')).toBeDefined();
    const left = await listed('leftParticipant');
    const all = await listed('starter');
    expect(left!.messageCount).toBeLessThan(all!.messageCount);
    expect(await listed('nonParticipant')).toBeUndefined();
  });

  it('shows the one who left the turns said while they took part, and their bound', async () => {
    const { conversation } = await ok<{
      conversation: { readableUntilTurn: number; messages: { nodes: { content: string }[] } };
    }>(
      'query($id: ID!) { conversation(id: $id) { readableUntilTurn messages(first: 50) { nodes { content } } } }',
      { id: shared.conversationId },
      users.leftParticipant,
    );
    expect(conversation.readableUntilTurn).toBeGreaterThan(0);
    const said = conversation.messages.nodes.map((n) => n.content);
    expect(said).toContain(shared.before);
    expect(said.join('\n')).not.toContain(shared.afterLeaving);
  });

  const MESSAGES = 'subscription($id: ID!) { messageAdded(conversationId: $id) { content } }';
  const DELTAS =
    'subscription($id: ID!) { assistantReplyDelta(conversationId: $id) { text done } }';

  it.each(
    (['messageAdded', 'assistantReplyDelta'] as const).flatMap((authorizes) =>
      CALLERS.map((caller) => ({
        authorizes,
        caller,
        code: (caller === 'anonymous'
          ? UNAUTH
          : caller === 'participant' || caller === 'starter'
            ? 'OK'
            : NF) as Code,
      })),
    ),
  )('$authorizes as $caller: $code', async ({ authorizes, caller, code }) => {
    const sub = subscribe<Record<string, unknown>>(
      t.ws(as(caller)),
      authorizes === 'messageAdded' ? MESSAGES : DELTAS,
      { id: shared.conversationId },
    );
    await sub.ready;
    const secret = `LIVE-${randomUUID()}`;
    await send(users.starter, shared.conversationId, secret);
    if (code === 'OK') {
      await sub.waitFor(1);
      expect(sub.events[0].errors).toBeUndefined();
      if (authorizes === 'messageAdded') expect(JSON.stringify(sub.events)).toContain(secret);
    } else {
      await sub.waitFor(1);
      expect(sub.events[0].errors![0].extensions).toMatchObject({ code });
      expect(JSON.stringify(sub.events)).not.toContain(secret);
    }
  });
});
