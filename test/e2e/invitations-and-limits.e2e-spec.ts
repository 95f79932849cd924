import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { GqlResponse, startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * Issue 11: joining a legacy is the invitee's choice (§3), limits for abuse (§7), and a member
 * who leaves or is removed can still delete their own conversations (§6).
 */

const ADD = `mutation($input: AddLegacyMemberInput!) {
  addLegacyMember(input: $input) { member { role } invitation { id email role createdAt expiresAt } } }`;
const MY_INVITATIONS = `{ myInvitations { id legacyId legacyName role invitedByName createdAt expiresAt } }`;
const ACCEPT = `mutation($id: ID!) { acceptInvitation(id: $id) { id name viewerRole } }`;
const DECLINE = `mutation($id: ID!) { declineInvitation(id: $id) }`;
const CANCEL = `mutation($l: ID!, $e: String!) { cancelLegacyInvitation(legacyId: $l, email: $e) }`;
const CREATE = `mutation($name: String!) { createLegacy(input: { name: $name }) { id } }`;
const START = `mutation($l: ID!) { startConversation(input: { legacyId: $l, title: "Mine" }) { id } }`;
const IMPORT = `mutation($input: ImportConversationInput!) {
  importConversation(input: $input) { importedCount conversation { id } } }`;

const DAY_S = 24 * 60 * 60;

/** The retry-after extension, in seconds. */
const retryAfterOf = (res: GqlResponse) => {
  const ext = res.errors?.[0]?.extensions ?? {};
  return (ext.retryAfterSeconds ?? ext.retryAfter) as number | undefined;
};

describe('Invitations, limits and ex-members', () => {
  let t: TestApp;
  let db: DataSource;
  let n = 0;

  beforeAll(async () => {
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      INVITATIONS_PER_LEGACY_PER_DAY: '5',
      MAX_MEMBERS_PER_LEGACY: '4',
      MAX_LEGACIES_PER_USER: '2',
      CONVERSATIONS_PER_USER_PER_DAY: '3',
      IMPORTS_PER_USER_PER_HOUR: '2',
    });
    db = t.app.get(DataSource);
  });
  afterAll(() => t?.close());

  /** A signed-in user (their account exists) with a fresh verified email. */
  async function person(label: string, signIn = true): Promise<TestUser> {
    n += 1;
    const u = await t.user(`inv-${label}-${n}`, {
      email: `${label}-${n}@example.com`,
      name: label,
    });
    if (signIn) await ok('{ me { id } }', {}, u);
    return u;
  }

  async function ok<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown>,
    as: TestUser,
  ): Promise<T> {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  function refused(res: GqlResponse, code: string) {
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0].extensions).toMatchObject({ code });
    expect(res.errors![0].extensions).not.toHaveProperty('stacktrace');
  }

  async function legacyOf(owner: TestUser, name = `Legacy ${randomUUID().slice(0, 8)}`) {
    return (await ok<{ createLegacy: { id: string } }>(CREATE, { name }, owner)).createLegacy.id;
  }

  const invite = (owner: TestUser, legacyId: string, email: string, role = 'MEMBER') =>
    t.gql<{ addLegacyMember: { member: unknown; invitation: Record<string, string> } }>(
      ADD,
      { input: { legacyId, email, role } },
      owner,
    );

  const myInvitations = async (u: TestUser) =>
    (await ok<{ myInvitations: Record<string, string>[] }>(MY_INVITATIONS, {}, u)).myInvitations;

  const isMember = async (legacyId: string, u: TestUser) =>
    (
      await db.query(
        `SELECT 1 FROM legacy_members m JOIN users u ON u.id = m.user_id
          WHERE m.legacy_id = $1 AND u.subject = $2`,
        [legacyId, u.sub],
      )
    ).length > 0;

  /** Invites `u` and has them accept: the only way in now. */
  async function join(owner: TestUser, legacyId: string, u: TestUser, role = 'MEMBER') {
    const res = await invite(owner, legacyId, u.email!, role);
    expect(res.errors).toBeUndefined();
    await ok(ACCEPT, { id: res.data!.addLegacyMember.invitation.id }, u);
  }

  // -- §3 joining is the invitee's choice ------------------------------------------------------

  it('answers the same for an email with an account and one without, and adds nobody', async () => {
    const owner = await person('owner');
    const bob = await person('bob');
    const legacyId = await legacyOf(owner, 'Grandma Rose');
    const before = Date.now();
    const known = await invite(owner, legacyId, bob.email!.toUpperCase());
    const unknown = await invite(owner, legacyId, `nobody-${randomUUID()}@example.com`);
    expect(known.errors).toBeUndefined();
    expect(unknown.errors).toBeUndefined();
    const shape = (r: typeof known) => ({
      member: r.data!.addLegacyMember.member,
      keys: Object.keys(r.data!.addLegacyMember.invitation).sort(),
      role: r.data!.addLegacyMember.invitation.role,
    });
    expect(shape(known)).toEqual(shape(unknown));
    expect(known.data!.addLegacyMember.member).toBeNull();
    expect(known.data!.addLegacyMember.invitation.email).toBe(bob.email);
    // Expires after INVITATION_TTL (14 days by default).
    const expiresAt = Date.parse(known.data!.addLegacyMember.invitation.expiresAt);
    expect(expiresAt - before).toBeGreaterThan(14 * DAY_S * 1000 - 60_000);
    expect(expiresAt - before).toBeLessThan(14 * DAY_S * 1000 + 60_000);

    expect(await isMember(legacyId, bob)).toBe(false);
    refused(
      await t.gql('query($id: ID!) { legacy(id: $id) { id } }', { id: legacyId }, bob),
      'NOT_FOUND',
    );
  });

  it('shows the invitee the invitation; accepting makes them a member', async () => {
    const owner = await person('owner');
    const bob = await person('bob');
    const mallory = await person('mallory');
    const legacyId = await legacyOf(owner, 'Grandpa Joe');
    const invitationId = (await invite(owner, legacyId, bob.email!, 'ADMIN')).data!.addLegacyMember
      .invitation.id;

    expect(await myInvitations(bob)).toEqual([
      expect.objectContaining({
        id: invitationId,
        legacyId,
        legacyName: 'Grandpa Joe',
        role: 'ADMIN',
        invitedByName: 'owner',
      }),
    ]);
    // Nobody else sees it or can answer it.
    expect(await myInvitations(mallory)).toEqual([]);
    refused(await t.gql(ACCEPT, { id: invitationId }, mallory), 'NOT_FOUND');
    refused(await t.gql(DECLINE, { id: invitationId }, mallory), 'NOT_FOUND');
    expect(await isMember(legacyId, mallory)).toBe(false);
    refused(await t.gql(ACCEPT, { id: invitationId }, null), 'UNAUTHENTICATED');

    const accepted = await ok<{ acceptInvitation: Record<string, string> }>(
      ACCEPT,
      { id: invitationId },
      bob,
    );
    expect(accepted.acceptInvitation).toEqual({
      id: legacyId,
      name: 'Grandpa Joe',
      viewerRole: 'ADMIN',
    });
    expect(await isMember(legacyId, bob)).toBe(true);
    expect(await myInvitations(bob)).toEqual([]);
    const managed = await ok<{ legacy: { invitations: unknown[] } }>(
      'query($id: ID!) { legacy(id: $id) { invitations { email } } }',
      { id: legacyId },
      owner,
    );
    expect(managed.legacy.invitations).toEqual([]);
    // Once only.
    refused(await t.gql(ACCEPT, { id: invitationId }, bob), 'NOT_FOUND');
    // Already a member: inviting again is a conflict (the family sees its members anyway).
    refused(await invite(owner, legacyId, bob.email!), 'CONFLICT');
  });

  it("shows members' emails to owners and admins and to each member their own; plain members see names", async () => {
    const owner = await person('email-owner');
    const admin = await person('email-admin');
    const max = await person('email-max');
    const mia = await person('email-mia');
    const legacyId = await legacyOf(owner);
    await join(owner, legacyId, admin, 'ADMIN');
    await join(owner, legacyId, max);
    await join(owner, legacyId, mia);
    const { addFact } = await ok<{ addFact: { id: string } }>(
      `mutation($i: AddFactInput!) { addFact(input: $i) { id } }`,
      { i: { legacyId, content: 'Grandma kept bees.', category: 'OTHER', visibility: 'SHARED' } },
      max,
    );
    const seenBy = async (viewer: TestUser) => {
      const { legacy, fact } = await ok<{
        legacy: { members: { user: { displayName: string; email: string | null } }[] };
        fact: { author: { displayName: string; email: string | null } };
      }>(
        `query($l: ID!, $f: ID!) {
           legacy(id: $l) { members { user { displayName email } } }
           fact(id: $f) { author { displayName email } } }`,
        { l: legacyId, f: addFact.id },
        viewer,
      );
      return {
        members: Object.fromEntries(legacy.members.map((m) => [m.user.displayName, m.user.email])),
        author: fact.author,
      };
    };
    const everyone = Object.fromEntries([owner, admin, max, mia].map((u) => [u.name!, u.email!]));
    for (const manager of [owner, admin])
      expect(await seenBy(manager)).toEqual({
        members: everyone,
        author: { displayName: max.name, email: max.email },
      });
    // A plain member sees the others by name, and their own email only.
    expect(await seenBy(mia)).toEqual({
      members: Object.fromEntries(
        [owner, admin, max, mia].map((u) => [u.name!, u === mia ? mia.email : null]),
      ),
      author: { displayName: max.name, email: null },
    });
    expect((await seenBy(max)).author).toEqual({ displayName: max.name, email: max.email });
  });

  it('lets someone invited before their first sign-in decline; they never join', async () => {
    const owner = await person('owner');
    const carol = await person('carol', false);
    const legacyId = await legacyOf(owner, 'Aunt May');
    expect((await invite(owner, legacyId, carol.email!)).errors).toBeUndefined();

    // First sign-in claims nothing by itself.
    await ok('{ me { id } }', {}, carol);
    expect(await isMember(legacyId, carol)).toBe(false);
    const listed = await myInvitations(carol);
    expect(listed).toEqual([expect.objectContaining({ legacyId, legacyName: 'Aunt May' })]);

    expect(await ok(DECLINE, { id: listed[0].id }, carol)).toEqual({ declineInvitation: true });
    expect(await isMember(legacyId, carol)).toBe(false);
    expect(await myInvitations(carol)).toEqual([]);
    refused(await t.gql(ACCEPT, { id: listed[0].id }, carol), 'NOT_FOUND');
  });

  it('neither lists nor accepts an expired invitation', async () => {
    const owner = await person('owner');
    const dave = await person('dave');
    const legacyId = await legacyOf(owner);
    const id = (await invite(owner, legacyId, dave.email!)).data!.addLegacyMember.invitation.id;
    await db.query(
      `UPDATE legacy_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    expect(await myInvitations(dave)).toEqual([]);
    refused(await t.gql(ACCEPT, { id }, dave), 'NOT_FOUND');
    refused(await t.gql(DECLINE, { id }, dave), 'NOT_FOUND');
    expect(await isMember(legacyId, dave)).toBe(false);
    const managed = await ok<{ legacy: { invitations: unknown[] } }>(
      'query($id: ID!) { legacy(id: $id) { invitations { email } } }',
      { id: legacyId },
      owner,
    );
    expect(managed.legacy.invitations).toEqual([]);
    // Inviting again sends a fresh one.
    const again = await invite(owner, legacyId, dave.email!);
    expect(again.errors).toBeUndefined();
    await ok(ACCEPT, { id: again.data!.addLegacyMember.invitation.id }, dave);
    expect(await isMember(legacyId, dave)).toBe(true);
  });

  it('caps the invitations a legacy sends per day; cancelling does not give them back', async () => {
    const owner = await person('owner');
    const legacyId = await legacyOf(owner);
    for (let i = 0; i < 5; i++) {
      const email = `capped-${i}-${randomUUID().slice(0, 6)}@example.com`;
      expect((await invite(owner, legacyId, email)).errors).toBeUndefined();
      await ok(CANCEL, { l: legacyId, e: email }, owner);
    }
    const sixth = await invite(owner, legacyId, `capped-6-${randomUUID()}@example.com`);
    refused(sixth, 'RATE_LIMITED');
    expect(sixth.errors![0].message).toMatch(/5 invitations/);
    expect(retryAfterOf(sixth)).toBeGreaterThan(DAY_S - 120);
    expect(retryAfterOf(sixth)).toBeLessThanOrEqual(DAY_S);
    // Another legacy has its own allowance.
    const otherOwner = await person('owner');
    const other = await legacyOf(otherOwner);
    expect((await invite(otherOwner, other, 'x@example.com')).errors).toBeUndefined();
  });

  // -- §7 limits for abuse ---------------------------------------------------------------------

  it('caps the members of a legacy, counting pending invitations', async () => {
    const owner = await person('owner');
    const legacyId = await legacyOf(owner);
    const bob = await person('bob');
    await join(owner, legacyId, bob);
    expect((await invite(owner, legacyId, 'pending-1@example.com')).errors).toBeUndefined();
    expect((await invite(owner, legacyId, 'pending-2@example.com')).errors).toBeUndefined();
    // Owner, bob and two pending invitations: 4 of 4.
    const full = await invite(owner, legacyId, 'pending-3@example.com');
    refused(full, 'BAD_USER_INPUT');
    expect(full.errors![0].extensions).toMatchObject({ reason: 'MEMBER_LIMIT_REACHED' });
    expect(full.errors![0].message).toMatch(/4 members/);
    // Renewing a pending invitation is not a new seat.
    expect(
      (await invite(owner, legacyId, 'pending-2@example.com', 'ADMIN')).errors,
    ).toBeUndefined();
    await ok(CANCEL, { l: legacyId, e: 'pending-1@example.com' }, owner);
    expect((await invite(owner, legacyId, 'pending-3@example.com')).errors).toBeUndefined();
  });

  it('caps the legacies a user owns, on creation and on accepting ownership', async () => {
    const owner = await person('owner');
    const first = await legacyOf(owner);
    await legacyOf(owner);
    const third = await t.gql(CREATE, { name: 'One too many' }, owner);
    refused(third, 'CONFLICT');
    expect(third.errors![0].extensions).toMatchObject({ reason: 'LEGACY_LIMIT_REACHED' });
    expect(third.errors![0].message).toMatch(/2 legacies/);
    expect(await db.query(`SELECT 1 FROM legacies WHERE name = 'One too many'`)).toHaveLength(0);

    // An invitation to become an owner is refused while at the limit; to be a member, not.
    const other = await person('other');
    const otherLegacy = await legacyOf(other);
    const asOwner = (await invite(other, otherLegacy, owner.email!, 'OWNER')).data!.addLegacyMember
      .invitation.id;
    const res = await t.gql(ACCEPT, { id: asOwner }, owner);
    refused(res, 'CONFLICT');
    expect(res.errors![0].extensions).toMatchObject({ reason: 'LEGACY_LIMIT_REACHED' });

    await ok('mutation($id: ID!) { deleteLegacy(id: $id) }', { id: first }, owner);
    expect((await t.gql(CREATE, { name: 'Now it fits' }, owner)).errors).toBeUndefined();
  });

  it('caps the conversations a user starts per day, even when several arrive at once', async () => {
    const owner = await person('owner');
    const legacyId = await legacyOf(owner);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.gql<{ startConversation: { id: string } }>(START, { l: legacyId }, owner),
      ),
    );
    expect(results.filter((r) => !r.errors)).toHaveLength(3);
    const limited = results.filter((r) => r.errors);
    for (const r of limited) {
      refused(r, 'RATE_LIMITED');
      expect(r.errors![0].message).toMatch(/3 conversations/);
      expect(retryAfterOf(r)).toBeGreaterThan(DAY_S - 120);
      expect(retryAfterOf(r)).toBeLessThanOrEqual(DAY_S);
    }
    // Deleting one does not give it back.
    const kept = results.find((r) => !r.errors)!.data!.startConversation.id;
    await ok('mutation($id: ID!) { deleteConversation(id: $id) }', { id: kept }, owner);
    refused(await t.gql(START, { l: legacyId }, owner), 'RATE_LIMITED');
    // Imports are conversations too.
    refused(
      await t.gql(
        IMPORT,
        {
          input: {
            legacyId,
            messages: [{ role: 'USER', content: 'hi', occurredAt: '2024-01-01T00:00:00.000Z' }],
          },
        },
        owner,
      ),
      'RATE_LIMITED',
    );
  });

  it('caps the imports a user makes per hour', async () => {
    const owner = await person('owner');
    const legacyId = await legacyOf(owner);
    const input = {
      legacyId,
      messages: [{ role: 'USER', content: 'hello', occurredAt: '2024-01-01T00:00:00.000Z' }],
    };
    await ok(IMPORT, { input }, owner);
    await ok(IMPORT, { input }, owner);
    const third = await t.gql(IMPORT, { input }, owner);
    refused(third, 'RATE_LIMITED');
    expect(third.errors![0].message).toMatch(/2 imports/);
    expect(retryAfterOf(third)).toBeGreaterThan(3600 - 120);
    expect(retryAfterOf(third)).toBeLessThanOrEqual(3600);
    expect(
      await db.query(
        `SELECT 1 FROM conversations c JOIN users u ON u.id = c.user_id WHERE u.subject = $1`,
        [owner.sub],
      ),
    ).toHaveLength(2);
  });

  // -- §6 a member's conversations remain theirs -----------------------------------------------

  it('lists only what was left behind, page by page', async () => {
    const owner = await person('owner');
    const bob = await person('bob');
    const [left, stayed] = [await legacyOf(owner), await legacyOf(owner)];
    await join(owner, left, bob);
    await join(owner, stayed, bob);
    const started = (l: string) =>
      ok<{ startConversation: { id: string } }>(START, { l }, bob).then(
        (r) => r.startConversation.id,
      );
    const older = await started(left);
    const newer = await started(left);
    await started(stayed);
    await ok('mutation($l: ID!) { leaveLegacy(legacyId: $l) }', { l: left }, bob);

    const PAGE = `query($after: String) { leftBehindConversations(first: 1, after: $after) {
      nodes { id } pageInfo { hasNextPage endCursor } } }`;
    type Page = {
      leftBehindConversations: {
        nodes: { id: string }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    };
    const first = (await ok<Page>(PAGE, {}, bob)).leftBehindConversations;
    expect(first.nodes).toEqual([{ id: newer }]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await ok<Page>(PAGE, { after: first.pageInfo.endCursor }, bob))
      .leftBehindConversations;
    expect(second.nodes).toEqual([{ id: older }]);
    expect(second.pageInfo.hasNextPage).toBe(false);
    refused(await t.gql(PAGE, { after: 'not-a-cursor' }, bob), 'BAD_USER_INPUT');
  });

  it.each(['leaves', 'is removed'])(
    'lets a member who %s find and delete their own conversations, and nothing more',
    async (how) => {
      const owner = await person('owner');
      const bob = await person('bob');
      const outsider = await person('outsider');
      const legacyId = await legacyOf(owner, 'Uncle Tom');
      await join(owner, legacyId, bob);
      const conversationId = (
        await ok<{ startConversation: { id: string } }>(START, { l: legacyId }, bob)
      ).startConversation.id;
      await ok(
        'mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "Tom fished." }) { message { id } } }',
        { id: conversationId },
        bob,
      );
      const ownerConversation = (
        await ok<{ startConversation: { id: string } }>(START, { l: legacyId }, owner)
      ).startConversation.id;
      const bobId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, bob)).me.id;
      if (how === 'leaves') {
        await ok('mutation($l: ID!) { leaveLegacy(legacyId: $l) }', { l: legacyId }, bob);
      } else {
        await ok(
          'mutation($input: RemoveLegacyMemberInput!) { removeLegacyMember(input: $input) }',
          { input: { legacyId, userId: bobId } },
          owner,
        );
      }

      // They find it among what they left behind (no turns, nothing of the legacy)...
      const LEFT =
        '{ leftBehindConversations(first: 10) { nodes { id legacyId title messageCount } } }';
      const list = await ok<{ leftBehindConversations: { nodes: unknown[] } }>(LEFT, {}, bob);
      expect(list.leftBehindConversations.nodes).toEqual([
        { id: conversationId, legacyId, title: 'Mine', messageCount: 1 },
      ]);
      // ...which nobody else sees.
      const ownerList = await ok<{ leftBehindConversations: { nodes: unknown[] } }>(
        LEFT,
        {},
        owner,
      );
      expect(ownerList.leftBehindConversations.nodes).toEqual([]);
      refused(
        await t.gql('query($id: ID!) { legacy(id: $id) { id } }', { id: legacyId }, bob),
        'NOT_FOUND',
      );
      // Nothing else: no reading the turns or listing by legacy, no new turns or conversations.
      refused(
        await t.gql(
          'query($l: ID!) { conversations(legacyId: $l, first: 10) { nodes { id } } }',
          { l: legacyId },
          bob,
        ),
        'NOT_FOUND',
      );
      refused(
        await t.gql(
          'query($id: ID!) { conversation(id: $id) { messages(first: 5) { nodes { content } } } }',
          { id: conversationId },
          bob,
        ),
        'NOT_FOUND',
      );
      refused(
        await t.gql(
          'mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "More." }) { message { id } } }',
          { id: conversationId },
          bob,
        ),
        'NOT_FOUND',
      );
      refused(await t.gql(START, { l: legacyId }, bob), 'NOT_FOUND');
      // Someone else's conversation in that legacy stays out of reach.
      refused(
        await t.gql(
          'mutation($id: ID!) { deleteConversation(id: $id) }',
          { id: ownerConversation },
          bob,
        ),
        'NOT_FOUND',
      );
      // A stranger cannot list or delete it.
      refused(
        await t.gql(
          'query($l: ID!) { conversations(legacyId: $l) { nodes { id } } }',
          { l: legacyId },
          outsider,
        ),
        'NOT_FOUND',
      );
      refused(
        await t.gql(
          'mutation($id: ID!) { deleteConversation(id: $id) }',
          { id: conversationId },
          outsider,
        ),
        'NOT_FOUND',
      );

      expect(
        await ok('mutation($id: ID!) { deleteConversation(id: $id) }', { id: conversationId }, bob),
      ).toEqual({
        deleteConversation: true,
      });
      expect(
        await db.query('SELECT 1 FROM conversations WHERE id = $1', [conversationId]),
      ).toHaveLength(0);
      expect(
        await db.query('SELECT 1 FROM messages WHERE conversation_id = $1', [conversationId]),
      ).toHaveLength(0);
      expect(
        (await ok<{ leftBehindConversations: { nodes: unknown[] } }>(LEFT, {}, bob))
          .leftBehindConversations.nodes,
      ).toEqual([]);
    },
  );
});
