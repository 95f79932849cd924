import { readFileSync } from 'node:fs';
import { renderSchema } from '../../src/graphql/schema-file.js';
import { signToken, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

const CREATE_LEGACY = `mutation($input: CreateLegacyInput!) {
  createLegacy(input: $input) { id name bornOn diedOn viewerRole members { role user { id email } } }
}`;
const START = `mutation($input: StartConversationInput!) {
  startConversation(input: $input) { id legacyId remember messageCount }
}`;
const SEND = `mutation($input: SendMessageInput!) {
  sendMessage(input: $input) {
    message { id turnIndex role content tokenCount createdAt occurredAt clientMessageId }
    reply { id }
  }
}`;

describe('Keepsake foundation (HTTP and WebSocket)', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off' });
    alice = await t.user('alice', { email: 'alice@example.com', name: 'Alice' });
    bob = await t.user('bob', { email: 'bob@example.com', name: 'Bob' });
  });

  afterAll(() => t.close());

  it('commits a schema.gql identical to the one the code generates', () => {
    expect(readFileSync('schema.gql', 'utf8')).toBe(renderSchema(t.app));
  });

  it('serves health checks', async () => {
    const base = t.url.replace('/graphql', '');
    const live = await fetch(`${base}/health/live`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    // Nothing more without METRICS_TOKEN (health.e2e-spec.ts: the details with it).
    expect(await ready.json()).toEqual({ status: 'ok' });
  });

  it('creates the user from the token on first use and updates settings', async () => {
    const me = await t.gql<{ me: { id: string; email: string; displayName: string } }>(
      '{ me { id email displayName timezone rememberByDefault isPlatformAdmin } }',
      {},
      alice,
    );
    expect(me.errors).toBeUndefined();
    expect(me.data!.me).toMatchObject({ email: 'alice@example.com', displayName: 'Alice' });

    const updated = await t.gql(
      `mutation { updateMe(input: { displayName: "Alice B", timezone: "Europe/Paris" }) { displayName timezone } }`,
      {},
      alice,
    );
    expect(updated.data).toEqual({
      updateMe: { displayName: 'Alice B', timezone: 'Europe/Paris' },
    });

    const bad = await t.gql(
      `mutation { updateMe(input: { timezone: "Mars/Olympus" }) { timezone } }`,
      {},
      alice,
    );
    expect(bad.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'timezone' });
  });

  it('rejects missing, expired, not-yet-valid and forged tokens', async () => {
    const none = await t.gql('{ me { id } }');
    expect(none.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    const expired = await signToken(
      'alice',
      {},
      { expiresIn: Math.floor(Date.now() / 1000) - 3600 },
    );
    expect((await t.gql('{ me { id } }', {}, expired)).errors![0].extensions!.code).toBe(
      'UNAUTHENTICATED',
    );
    const early = await signToken('alice', {}, { notBefore: Math.floor(Date.now() / 1000) + 3600 });
    expect((await t.gql('{ me { id } }', {}, early)).errors![0].message).toMatch(/not valid yet/);
    const forged = await signToken(
      'alice',
      {},
      { secret: 'another-secret-that-is-32-characters-x' },
    );
    const res = await t.gql('{ me { id } }', {}, forged);
    expect(res.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify(res)).not.toMatch(/stack|at .*\.js/);
  });

  it('refuses a request without a valid token as a whole, 401, missing or refused alike', async () => {
    const post = (query: string, token?: string) =>
      fetch(t.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query }),
      });
    const forged = await signToken(
      'alice',
      {},
      { secret: 'another-secret-that-is-32-characters-x' },
    );
    for (const [token, reason] of [
      [undefined, 'MISSING_TOKEN'],
      ['not.a.token', 'INVALID_TOKEN'],
      [forged, 'INVALID_TOKEN'],
    ] as const) {
      for (const query of [
        '{ me { id } }',
        'mutation { createLegacy(input: { name: "X" }) { id } }',
      ]) {
        const res = await post(query, token);
        expect(res.status).toBe(401);
        const body = (await res.json()) as { data?: unknown; errors: { extensions: unknown }[] };
        expect(body.data ?? null).toBeNull();
        expect(body.errors).toHaveLength(1);
        expect(body.errors[0].extensions).toEqual({ code: 'UNAUTHENTICATED', reason });
      }
    }
    // An operation of meta fields only needs no token, and a refused token is refused there too.
    expect((await post('{ __typename }')).status).toBe(200);
    expect((await post('{ __typename }', 'not.a.token')).status).toBe(401);
  });

  it('manages a family: owners, admins, invitations, last-owner rule', async () => {
    const created = await t.gql<{ createLegacy: { id: string; viewerRole: string } }>(
      CREATE_LEGACY,
      { input: { name: 'Grandpa Joe', bornOn: '1930-04-02', diedOn: '2019-12-01' } },
      alice,
    );
    expect(created.errors).toBeUndefined();
    const legacyId = created.data!.createLegacy.id;
    expect(created.data!.createLegacy.viewerRole).toBe('OWNER');

    // Bob has an account, Carol has not: both are invited, with the same answer, and neither
    // joins until they accept.
    await t.gql('{ me { id } }', {}, bob);
    const ADD = `mutation($input: AddLegacyMemberInput!) {
      addLegacyMember(input: $input) { member { role } invitation { id email role } } }`;
    type Added = { addLegacyMember: { member: null; invitation: { id: string; email: string } } };
    const add = await t.gql<Added>(
      ADD,
      { input: { legacyId, email: 'BOB@example.com', role: 'MEMBER' } },
      alice,
    );
    expect(add.data!.addLegacyMember).toMatchObject({
      member: null,
      invitation: { email: 'bob@example.com', role: 'MEMBER' },
    });
    const bobBefore = await t.gql(
      `query($id: ID!) { legacy(id: $id) { id } }`,
      { id: legacyId },
      bob,
    );
    expect(bobBefore.errors![0].extensions!.code).toBe('NOT_FOUND');
    const bobAccepts = await t.gql<{ acceptInvitation: { viewerRole: string } }>(
      `mutation($id: ID!) { acceptInvitation(id: $id) { viewerRole } }`,
      { id: add.data!.addLegacyMember.invitation.id },
      bob,
    );
    expect(bobAccepts.data!.acceptInvitation.viewerRole).toBe('MEMBER');

    const invite = await t.gql<Added>(
      ADD,
      { input: { legacyId, email: 'carol@example.com', role: 'ADMIN' } },
      alice,
    );
    expect(invite.data!.addLegacyMember).toMatchObject({
      member: null,
      invitation: { email: 'carol@example.com', role: 'ADMIN' },
    });
    // Someone else whose provider has not verified that address gets nothing from it.
    const mallory = await signToken('mallory', {
      email: 'carol@example.com',
      email_verified: false,
    });
    const malloryMe = await t.gql<{ me: { email: string | null } }>(
      '{ me { email } }',
      {},
      mallory,
    );
    expect(malloryMe.data!.me.email).toBeNull();
    const malloryInvitations = await t.gql('{ myInvitations { id } }', {}, mallory);
    expect(malloryInvitations.data).toEqual({ myInvitations: [] });
    const malloryView = await t.gql(
      `query($id: ID!) { legacy(id: $id) { viewerRole } }`,
      { id: legacyId },
      mallory,
    );
    expect(malloryView.errors![0].extensions!.code).toBe('NOT_FOUND');
    // Carol's first sign-in shows her the invitation; she joins by accepting it.
    const carol = await t.user('carol', { email: 'carol@example.com' });
    const carolBefore = await t.gql(
      `query($id: ID!) { legacy(id: $id) { viewerRole } }`,
      { id: legacyId },
      carol,
    );
    expect(carolBefore.errors![0].extensions!.code).toBe('NOT_FOUND');
    const carolInvitations = await t.gql<{ myInvitations: { id: string; legacyName: string }[] }>(
      '{ myInvitations { id legacyName } }',
      {},
      carol,
    );
    expect(carolInvitations.data!.myInvitations).toEqual([
      { id: invite.data!.addLegacyMember.invitation.id, legacyName: 'Grandpa Joe' },
    ]);
    await t.gql(
      `mutation($id: ID!) { acceptInvitation(id: $id) { id } }`,
      { id: invite.data!.addLegacyMember.invitation.id },
      carol,
    );
    const carolView = await t.gql<{ legacy: { viewerRole: string } }>(
      `query($id: ID!) { legacy(id: $id) { viewerRole } }`,
      { id: legacyId },
      carol,
    );
    expect(carolView.data!.legacy.viewerRole).toBe('ADMIN');

    // A member cannot manage members; an admin cannot make an owner.
    const bobId = (await t.gql<{ me: { id: string } }>('{ me { id } }', {}, bob)).data!.me.id;
    const aliceId = (await t.gql<{ me: { id: string } }>('{ me { id } }', {}, alice)).data!.me.id;
    const byMember = await t.gql(
      `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role } }`,
      { input: { legacyId, userId: bobId, role: 'ADMIN' } },
      bob,
    );
    expect(byMember.errors![0].extensions!.code).toBe('FORBIDDEN');
    const adminMakesOwner = await t.gql(
      `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role } }`,
      { input: { legacyId, userId: bobId, role: 'OWNER' } },
      carol,
    );
    expect(adminMakesOwner.errors![0].extensions!.code).toBe('FORBIDDEN');

    // The last owner can neither leave nor be demoted.
    const leave = await t.gql(
      `mutation($id: ID!) { leaveLegacy(legacyId: $id) }`,
      { id: legacyId },
      alice,
    );
    expect(leave.errors![0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'LAST_OWNER' });
    const demote = await t.gql(
      `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role } }`,
      { input: { legacyId, userId: aliceId, role: 'MEMBER' } },
      alice,
    );
    expect(demote.errors![0].extensions!.reason).toBe('LAST_OWNER');

    // With a second owner, the first may leave.
    await t.gql(
      `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role } }`,
      { input: { legacyId, userId: bobId, role: 'OWNER' } },
      alice,
    );
    const members = await t.gql<{
      legacy: { members: { role: string; user: { email: string } }[] };
    }>(
      `query($id: ID!) { legacy(id: $id) { members { role user { email } } } }`,
      { id: legacyId },
      alice,
    );
    expect(members.data!.legacy.members.map((m) => [m.user.email, m.role])).toEqual([
      ['alice@example.com', 'OWNER'],
      ['bob@example.com', 'OWNER'],
      ['carol@example.com', 'ADMIN'],
    ]);
    const left = await t.gql(
      `mutation($id: ID!) { leaveLegacy(legacyId: $id) }`,
      { id: legacyId },
      alice,
    );
    expect(left.data).toEqual({ leaveLegacy: true });
    const gone = await t.gql(`query($id: ID!) { legacy(id: $id) { id } }`, { id: legacyId }, alice);
    expect(gone.errors![0].extensions!.code).toBe('NOT_FOUND');
  });

  it('rejects bad legacy input with the offending field and writes nothing', async () => {
    const before = await t.gql<{ legacies: { nodes: unknown[] } }>(
      '{ legacies(first: 100) { nodes { id } } }',
      {},
      bob,
    );
    const res = await t.gql(
      CREATE_LEGACY,
      { input: { name: 'X', bornOn: '2000-01-01', diedOn: '1990-01-01' } },
      bob,
    );
    expect(res.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'diedOn' });
    const badDate = await t.gql(CREATE_LEGACY, { input: { name: 'X', bornOn: 'yesterday' } }, bob);
    expect(badDate.errors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'bornOn',
    });
    const badId = await t.gql(`query { legacy(id: "nope") { id } }`, {}, bob);
    expect(badId.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
    const after = await t.gql<{ legacies: { nodes: unknown[] } }>(
      '{ legacies(first: 100) { nodes { id } } }',
      {},
      bob,
    );
    expect(after.data!.legacies.nodes).toHaveLength(before.data!.legacies.nodes.length);
  });

  it('pages legacies with cursors', async () => {
    const dave = await t.user('dave');
    for (const name of ['A', 'B', 'C']) await t.gql(CREATE_LEGACY, { input: { name } }, dave);
    const p1 = await t.gql<{
      legacies: {
        nodes: { name: string }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    }>('{ legacies(first: 2) { nodes { name } pageInfo { hasNextPage endCursor } } }', {}, dave);
    expect(p1.data!.legacies.nodes.map((n) => n.name)).toEqual(['A', 'B']);
    expect(p1.data!.legacies.pageInfo.hasNextPage).toBe(true);
    const p2 = await t.gql<{
      legacies: { nodes: { name: string }[]; pageInfo: { hasNextPage: boolean } };
    }>(
      'query($after: String) { legacies(first: 2, after: $after) { nodes { name } pageInfo { hasNextPage } } }',
      { after: p1.data!.legacies.pageInfo.endCursor },
      dave,
    );
    expect(p2.data!.legacies.nodes.map((n) => n.name)).toEqual(['C']);
    expect(p2.data!.legacies.pageInfo.hasNextPage).toBe(false);
    const tooMany = await t.gql('{ legacies(first: 5000) { nodes { id } } }', {}, dave);
    expect(tooMany.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
  });

  describe('conversations', () => {
    let legacyId: string;
    let conversationId: string;
    let erin: TestUser;

    beforeAll(async () => {
      erin = await t.user('erin', { email: 'erin@example.com' });
      legacyId = (
        await t.gql<{ createLegacy: { id: string } }>(
          CREATE_LEGACY,
          { input: { name: 'Nana' } },
          erin,
        )
      ).data!.createLegacy.id;
      const started = await t.gql<{ startConversation: { id: string; remember: boolean } }>(
        START,
        { input: { legacyId, title: 'Memories of Nana' } },
        erin,
      );
      conversationId = started.data!.startConversation.id;
      // Memory is opt-in: rememberByDefault starts off.
      expect(started.data!.startConversation.remember).toBe(false);
    });

    it('stores turns with token counts and makes clientMessageId idempotent', async () => {
      const first = await t.gql<{
        sendMessage: {
          message: {
            id: string;
            turnIndex: number;
            tokenCount: number;
            occurredAt: string;
            createdAt: string;
          };
          reply: null;
        };
      }>(
        SEND,
        {
          input: { conversationId, content: 'Nana grew roses in Dorset.', clientMessageId: 'c-1' },
        },
        erin,
      );
      expect(first.errors).toBeUndefined();
      const msg = first.data!.sendMessage.message;
      expect(msg.turnIndex).toBe(0);
      expect(msg.tokenCount).toBeGreaterThan(4);
      expect(msg.occurredAt).toBe(msg.createdAt);
      expect(first.data!.sendMessage.reply).toBeNull();

      const again = await t.gql<{ sendMessage: { message: { id: string } } }>(
        SEND,
        {
          input: { conversationId, content: 'Nana grew roses in Dorset.', clientMessageId: 'c-1' },
        },
        erin,
      );
      expect(again.data!.sendMessage.message.id).toBe(msg.id);
      const conflict = await t.gql(
        SEND,
        { input: { conversationId, content: 'Something else', clientMessageId: 'c-1' } },
        erin,
      );
      expect(conflict.errors![0].extensions!.code).toBe('CONFLICT');

      const empty = await t.gql(SEND, { input: { conversationId, content: '   \n ' } }, erin);
      expect(empty.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'content',
      });
      const huge = await t.gql(
        SEND,
        { input: { conversationId, content: 'x'.repeat(32_001) } },
        erin,
      );
      expect(huge.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'content',
      });

      const count = await t.gql<{ conversation: { messageCount: number } }>(
        `query($id: ID!) { conversation(id: $id) { messageCount } }`,
        { id: conversationId },
        erin,
      );
      expect(count.data!.conversation.messageCount).toBe(1);
    });

    it('keeps turn indexes gapless when 50 sends race', async () => {
      const conv = (
        await t.gql<{ startConversation: { id: string } }>(START, { input: { legacyId } }, erin)
      ).data!.startConversation.id;
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          t.gql<{ sendMessage: { message: { turnIndex: number } } }>(
            SEND,
            { input: { conversationId: conv, content: `message ${i}` } },
            erin,
          ),
        ),
      );
      expect(results.every((r) => !r.errors)).toBe(true);
      const indexes = results
        .map((r) => r.data!.sendMessage.message.turnIndex)
        .sort((a, b) => a - b);
      expect(indexes).toEqual(Array.from({ length: 50 }, (_, i) => i));
    });

    it('pages messages forwards and backwards', async () => {
      const conv = (
        await t.gql<{ startConversation: { id: string } }>(START, { input: { legacyId } }, erin)
      ).data!.startConversation.id;
      for (let i = 0; i < 5; i++)
        await t.gql(SEND, { input: { conversationId: conv, content: `m${i}` } }, erin);
      const q = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
        conversation(id: $id) { messages(first: $first, after: $after, last: $last, before: $before) {
          nodes { content turnIndex } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`;
      type Page = {
        conversation: {
          messages: {
            nodes: { content: string }[];
            pageInfo: {
              hasNextPage: boolean;
              hasPreviousPage: boolean;
              startCursor: string;
              endCursor: string;
            };
          };
        };
      };
      const first = await t.gql<Page>(q, { id: conv, first: 2 }, erin);
      expect(first.data!.conversation.messages.nodes.map((n) => n.content)).toEqual(['m0', 'm1']);
      const next = await t.gql<Page>(
        q,
        { id: conv, first: 2, after: first.data!.conversation.messages.pageInfo.endCursor },
        erin,
      );
      expect(next.data!.conversation.messages.nodes.map((n) => n.content)).toEqual(['m2', 'm3']);
      const last = await t.gql<Page>(q, { id: conv, last: 2 }, erin);
      expect(last.data!.conversation.messages.nodes.map((n) => n.content)).toEqual(['m3', 'm4']);
      expect(last.data!.conversation.messages.pageInfo.hasPreviousPage).toBe(true);
      const before = await t.gql<Page>(
        q,
        { id: conv, last: 2, before: last.data!.conversation.messages.pageInfo.startCursor },
        erin,
      );
      expect(before.data!.conversation.messages.nodes.map((n) => n.content)).toEqual(['m1', 'm2']);
      const badCursor = await t.gql(q, { id: conv, first: 2, after: 'garbage' }, erin);
      expect(badCursor.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'after',
      });
    });

    it('records assistant turns and lists conversations by last activity', async () => {
      const rec = await t.gql<{
        recordAssistantMessage: {
          role: string;
          turnIndex: number;
          metadata: Record<string, unknown>;
        };
      }>(
        `mutation($input: RecordAssistantMessageInput!) { recordAssistantMessage(input: $input) { role turnIndex metadata } }`,
        {
          input: {
            conversationId,
            content: 'How lovely. What colour were they?',
            metadata: { model: 'client-side' },
          },
        },
        erin,
      );
      expect(rec.data!.recordAssistantMessage).toMatchObject({
        role: 'ASSISTANT',
        turnIndex: 1,
        metadata: { model: 'client-side' },
      });
      const list = await t.gql<{ conversations: { nodes: { id: string }[] } }>(
        `query($legacyId: ID!) { conversations(legacyId: $legacyId, first: 10) { nodes { id } } }`,
        { legacyId },
        erin,
      );
      expect(list.data!.conversations.nodes[0].id).toBe(conversationId);
      const bigMeta = await t.gql(
        `mutation($input: RecordAssistantMessageInput!) { recordAssistantMessage(input: $input) { id } }`,
        { input: { conversationId, content: 'x', metadata: { blob: 'y'.repeat(9000) } } },
        erin,
      );
      expect(bigMeta.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'metadata',
      });
    });

    it('imports a conversation all or nothing', async () => {
      const messages = Array.from({ length: 300 }, (_, i) => ({
        role: i % 2 ? 'ASSISTANT' : 'USER',
        content: `turn ${i}`,
        occurredAt: new Date(Date.UTC(2023, 4, 8, 13, 56, i)).toISOString(),
        metadata: { dia_id: `D1:${i + 1}` },
      }));
      const IMPORT = `mutation($input: ImportConversationInput!) { importConversation(input: $input) {
        importedCount conversation { id messageCount messages(last: 1) { nodes { turnIndex occurredAt metadata } } } } }`;
      const ok = await t.gql<{
        importConversation: {
          importedCount: number;
          conversation: {
            messageCount: number;
            messages: {
              nodes: { turnIndex: number; occurredAt: string; metadata: { dia_id: string } }[];
            };
          };
        };
      }>(IMPORT, { input: { legacyId, title: 'Imported', messages } }, erin);
      expect(ok.errors).toBeUndefined();
      expect(ok.data!.importConversation.importedCount).toBe(300);
      expect(ok.data!.importConversation.conversation.messages.nodes[0]).toMatchObject({
        turnIndex: 299,
        occurredAt: messages[299].occurredAt.replace('Z', '.000Z').replace('.000.000Z', '.000Z'),
        metadata: { dia_id: 'D1:300' },
      });

      const before = await t.gql<{ conversations: { nodes: unknown[] } }>(
        `query($legacyId: ID!) { conversations(legacyId: $legacyId, first: 100) { nodes { id } } }`,
        { legacyId },
        erin,
      );
      const broken = [
        ...messages.slice(0, 10),
        { role: 'USER', content: '  ', occurredAt: messages[0].occurredAt },
      ];
      const bad = await t.gql(IMPORT, { input: { legacyId, messages: broken } }, erin);
      expect(bad.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'messages.10.content',
      });
      const after = await t.gql<{ conversations: { nodes: unknown[] } }>(
        `query($legacyId: ID!) { conversations(legacyId: $legacyId, first: 100) { nodes { id } } }`,
        { legacyId },
        erin,
      );
      expect(after.data!.conversations.nodes).toHaveLength(before.data!.conversations.nodes.length);
    });

    it('delivers messageAdded to the owner over graphql-ws', async () => {
      const client = t.ws(erin);
      const sub = subscribe<{ messageAdded: { content: string; turnIndex: number } }>(
        client,
        `subscription($id: ID!) { messageAdded(conversationId: $id) { content turnIndex role } }`,
        { id: conversationId },
      );
      await sub.ready;
      await t.gql(SEND, { input: { conversationId, content: 'Over the wire' } }, erin);
      const events = await sub.waitFor(1);
      expect(events[0].data!.messageAdded.content).toBe('Over the wire');
      sub.unsubscribe();
    });

    it('deletes a conversation with everything under it', async () => {
      const conv = (
        await t.gql<{ startConversation: { id: string } }>(START, { input: { legacyId } }, erin)
      ).data!.startConversation.id;
      await t.gql(SEND, { input: { conversationId: conv, content: 'to be deleted' } }, erin);
      const del = await t.gql(
        `mutation($id: ID!) { deleteConversation(id: $id) }`,
        { id: conv },
        erin,
      );
      expect(del.data).toEqual({ deleteConversation: true });
      const gone = await t.gql(
        `query($id: ID!) { conversation(id: $id) { id } }`,
        { id: conv },
        erin,
      );
      expect(gone.errors![0].extensions!.code).toBe('NOT_FOUND');
    });
  });

  it('refuses queries that are too deep or too complex', async () => {
    const deep = await t.gql(
      '{ legacies(first: 100) { nodes { members { user { id } } } edges { node { members { user { id } } } } } }',
      {},
      alice,
    );
    expect(deep.errors).toBeUndefined();
    const complex = await t.gql(
      `{ legacies(first: 100) { nodes { id } a: edges { node { id } } } l2: legacies(first: 100) { nodes { id name description } }
         l3: legacies(first: 100) { nodes { members { role user { id email displayName } } } } }`,
      {},
      alice,
    );
    expect(complex.errors).toBeUndefined();
    const tooMuch = await t.gql(
      `query { ${Array.from({ length: 60 }, (_, i) => `l${i}: legacies(first: 100) { nodes { id name } }`).join(' ')} }`,
      {},
      alice,
    );
    expect(tooMuch.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
  });
});
