import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import { joinLegacy } from '../support/membership.js';

const DELTAS = `subscription($id: ID!) {
  assistantReplyDelta(conversationId: $id) { sequence text done messageId }
}`;

/** Who may follow the agent's reply as it streams: the conversation's owner only. */
const table: {
  authorizes: 'assistantReplyDelta';
  caller: 'anonymous' | 'outsider' | 'family member';
  code: string;
}[] = [
  { authorizes: 'assistantReplyDelta', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'assistantReplyDelta', caller: 'outsider', code: 'NOT_FOUND' },
  { authorizes: 'assistantReplyDelta', caller: 'family member', code: 'NOT_FOUND' },
];

describe('assistantReplyDelta authorization', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let conversationId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.user('authz-owner', { email: 'owner@example.com' });
    member = await t.user('authz-member', { email: 'member@example.com' });
    outsider = await t.user('authz-outsider', { email: 'outsider@example.com' });
    await t.gql('{ me { id } }', {}, member);
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Nana" }) { id } }',
      {},
      owner,
    );
    const legacyId = legacy.data!.createLegacy.id;
    await joinLegacy(t, owner, legacyId, member);
    const started = await t.gql<{ startConversation: { id: string } }>(
      `mutation($input: StartConversationInput!) { startConversation(input: $input) { id } }`,
      { input: { legacyId } },
      owner,
    );
    conversationId = started.data!.startConversation.id;
  });
  afterAll(() => t.close());

  const who = (caller: (typeof table)[number]['caller']) =>
    caller === 'anonymous' ? null : caller === 'outsider' ? outsider : member;

  it.each(table)(
    '$authorizes as $caller: $code, and no reply text leaks',
    async ({ caller, code }) => {
      const refused = subscribe<Record<string, unknown>>(t.ws(who(caller)), DELTAS, {
        id: conversationId,
      });
      await refused.ready;
      const sent = await t.gql<{ sendMessage: { reply: { content: string } } }>(
        `mutation($input: SendMessageInput!) { sendMessage(input: $input) { reply { content } } }`,
        { input: { conversationId, content: 'Nana kept bees behind the house.' } },
        owner,
      );
      expect(sent.data!.sendMessage.reply.content.length).toBeGreaterThan(0);
      await refused.waitFor(1);
      await new Promise((r) => setTimeout(r, 50));
      expect(refused.events).toHaveLength(1);
      expect(refused.events[0].data ?? null).toBeNull();
      expect(refused.events[0].errors![0].extensions).toMatchObject({ code });
      expect(JSON.stringify(refused.events)).not.toContain('bees');
      refused.unsubscribe();
    },
  );

  it('streams to the owner', async () => {
    const own = subscribe<{ assistantReplyDelta: { done: boolean } }>(t.ws(owner), DELTAS, {
      id: conversationId,
    });
    await own.ready;
    await t.gql(
      `mutation($input: SendMessageInput!) { sendMessage(input: $input) { reply { id } } }`,
      { input: { conversationId, content: 'She sold honey at the market.' } },
      owner,
    );
    await own.waitFor(2);
    expect(own.events.every((e) => e.errors === undefined)).toBe(true);
    own.unsubscribe();
  });
});
