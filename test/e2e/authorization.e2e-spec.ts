import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { DataSource } from 'typeorm';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * Who may do what, for every operation of schema.gql. Each operation declares its outcome for
 * the five callers; every row checks the error code, that nothing leaked into the response,
 * and (for mutations) in the database whether the change happened exactly when it was allowed.
 */

type Role = 'anonymous' | 'outsider' | 'member' | 'admin' | 'owner';
type Outcome = 'OK' | 'UNAUTHENTICATED' | 'NOT_FOUND' | 'FORBIDDEN';
type Matrix = [
  anonymous: Outcome,
  outsider: Outcome,
  member: Outcome,
  admin: Outcome,
  owner: Outcome,
];
/** Signed-in users of a fixture: the five roles, a second owner and a second plain member. */
type Person = Exclude<Role, 'anonymous'> | 'coOwner' | 'other' | 'platformAdmin';

const ROLES: Role[] = ['anonymous', 'outsider', 'member', 'admin', 'owner'];
const OK = 'OK';
const UNAUTH = 'UNAUTHENTICATED';
const NF = 'NOT_FOUND';
const FORBID = 'FORBIDDEN';

/** A legacy with every kind of member, a pending invitation and the member's conversation. */
interface Fixture {
  legacyId: string;
  /** Started by `member`; holds one message whose content contains `secret`. */
  conversationId: string;
  invitedEmail: string;
  /** A pending invitation to the outsider's email (an existing account). */
  outsiderInvitationId: string;
  /** Appears in the legacy's name, the conversation's title and its message: must never leak. */
  secret: string;
}

interface Operation {
  name: string;
  query: string;
  variables: (f: Fixture, role: Role) => Record<string, unknown>;
  matrix: Matrix;
  /**
   * Destructive when allowed: its allowed rows run on a fixture of their own. Its refused rows
   * run on the shared fixture, which they must leave untouched (`effect` checks it).
   */
  fresh?: boolean;
  /** What `data` must match when the call is allowed. */
  data?: (f: Fixture, role: Role) => Record<string, unknown>;
  /** For a refused nullable field: the data that comes back around it (otherwise null). */
  refusedData?: (f: Fixture, outcome: Outcome) => Record<string, unknown> | null;
  /** Whether the mutation took effect, read from the database: true exactly for allowed rows. */
  effect?: (f: Fixture, role: Role) => Promise<boolean>;
}

const LEGACY_ROLE: Record<Role, string | null> = {
  anonymous: null,
  outsider: null,
  member: 'MEMBER',
  admin: 'ADMIN',
  owner: 'OWNER',
};

describe('Authorization matrix', () => {
  let t: TestApp;
  let db: DataSource;
  const users = {} as Record<Person, TestUser>;
  const ids = {} as Record<Person, string>;
  let shared: Fixture;

  const as = (role: Role): TestUser | null => (role === 'anonymous' ? null : users[role]);
  const rows = (sql: string, params: unknown[]) => db.query<Record<string, unknown>[]>(sql, params);
  const exists = async (sql: string, params: unknown[]) => (await rows(sql, params)).length > 0;
  const roleOf = async (f: Fixture, who: Person) =>
    (
      await rows('SELECT role FROM legacy_members WHERE legacy_id = $1 AND user_id = $2', [
        f.legacyId,
        ids[who],
      ])
    )[0]?.role ?? null;

  async function ok<T>(query: string, variables: Record<string, unknown>, who: TestUser) {
    const res = await t.gql<T>(query, variables, who);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  async function createFixture(): Promise<Fixture> {
    const secret = `SECRET-${randomUUID()}`;
    const invitedEmail = `invited-${randomUUID().slice(0, 8)}@example.com`;
    const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
      `mutation($name: String!) { createLegacy(input: { name: $name }) { id } }`,
      { name: `Legacy ${secret}` },
      users.owner,
    );
    const legacyId = createLegacy.id;
    const invite = (email: string) =>
      ok<{ addLegacyMember: { invitation: { id: string } } }>(
        `mutation($input: AddLegacyMemberInput!) { addLegacyMember(input: $input) { invitation { id } } }`,
        { input: { legacyId, email, role: 'MEMBER' } },
        users.owner,
      );
    // Everyone joins by accepting an invitation; two stay pending (no account, and the outsider).
    const [, , , , , toOutsider] = await Promise.all([
      joinLegacy(t, users.owner, legacyId, users.coOwner, 'OWNER'),
      joinLegacy(t, users.owner, legacyId, users.admin, 'ADMIN'),
      joinLegacy(t, users.owner, legacyId, users.member, 'MEMBER'),
      joinLegacy(t, users.owner, legacyId, users.other, 'MEMBER'),
      invite(invitedEmail),
      invite(users.outsider.email!),
    ]);
    const outsiderInvitationId = toOutsider.addLegacyMember.invitation.id;
    const { startConversation } = await ok<{ startConversation: { id: string } }>(
      `mutation($input: StartConversationInput!) { startConversation(input: $input) { id } }`,
      // remember on, so that switching it off (setConversationRemember) is observable.
      { input: { legacyId, title: `Conversation ${secret}`, remember: true } },
      users.member,
    );
    const conversationId = startConversation.id;
    await ok(
      `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`,
      { input: { conversationId, content: `Message ${secret}` } },
      users.member,
    );
    return { legacyId, conversationId, invitedEmail, outsiderInvitationId, secret };
  }

  beforeAll(async () => {
    // No worker: a retried job stays PENDING for the checks below.
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      // Every fixture is owned by the same two users; the limit has tests of its own.
      MAX_LEGACIES_PER_USER: '1000',
    });
    db = t.app.get(DataSource);
    const people: Person[] = ['owner', 'coOwner', 'admin', 'member', 'other', 'outsider'];
    for (const who of [...people, 'platformAdmin' as const]) {
      users[who] = await t.user(`authz-${who}`, {
        email: `${who}@authz.example.com`,
        admin: who === 'platformAdmin',
      });
      ids[who] = (await ok<{ me: { id: string } }>('{ me { id } }', {}, users[who])).me.id;
    }
    shared = await createFixture();
  });

  afterAll(() => t?.close());

  // matrix: [anonymous, outsider, member, admin, owner]
  const operations: Operation[] = [
    // -- identity ------------------------------------------------------------------------------
    {
      name: 'me',
      query: '{ me { id } }',
      variables: () => ({}),
      matrix: [UNAUTH, OK, OK, OK, OK],
      data: (_f, role) => ({ me: { id: ids[role as Person] } }),
    },
    {
      name: 'updateMe',
      query: 'mutation { updateMe(input: { timezone: "Europe/Paris" }) { id timezone } }',
      variables: () => ({}),
      matrix: [UNAUTH, OK, OK, OK, OK],
      data: (_f, role) => ({ updateMe: { id: ids[role as Person], timezone: 'Europe/Paris' } }),
    },
    // -- legacies ------------------------------------------------------------------------------
    {
      name: 'legacies',
      query: '{ legacies(first: 100) { nodes { id name viewerRole } } }',
      variables: () => ({}),
      matrix: [UNAUTH, OK, OK, OK, OK],
      data: (f, role) => ({
        legacies: {
          nodes:
            role === 'outsider'
              ? expect.not.arrayContaining([expect.objectContaining({ id: f.legacyId })])
              : expect.arrayContaining([
                  { id: f.legacyId, name: `Legacy ${f.secret}`, viewerRole: LEGACY_ROLE[role] },
                ]),
        },
      }),
    },
    {
      name: 'legacy',
      query: 'query($id: ID!) { legacy(id: $id) { id name viewerRole } }',
      variables: (f) => ({ id: f.legacyId }),
      matrix: [UNAUTH, NF, OK, OK, OK],
      data: (f, role) => ({
        legacy: { id: f.legacyId, name: `Legacy ${f.secret}`, viewerRole: LEGACY_ROLE[role] },
      }),
    },
    {
      name: 'legacy.members',
      query: 'query($id: ID!) { legacy(id: $id) { members { role user { id } } } }',
      variables: (f) => ({ id: f.legacyId }),
      matrix: [UNAUTH, NF, OK, OK, OK],
      data: () => ({
        legacy: {
          members: expect.arrayContaining([
            { role: 'OWNER', user: { id: ids.owner } },
            { role: 'OWNER', user: { id: ids.coOwner } },
            { role: 'ADMIN', user: { id: ids.admin } },
            { role: 'MEMBER', user: { id: ids.member } },
            { role: 'MEMBER', user: { id: ids.other } },
          ]),
        },
      }),
    },
    {
      name: 'legacy.invitations',
      query: 'query($id: ID!) { legacy(id: $id) { id invitations { email role } } }',
      variables: (f) => ({ id: f.legacyId }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      data: (f) => ({
        legacy: {
          id: f.legacyId,
          invitations: expect.arrayContaining([{ email: f.invitedEmail, role: 'MEMBER' }]),
        },
      }),
      // A member still sees the legacy; only the invitations are withheld.
      refusedData: (f, outcome) =>
        outcome === FORBID ? { legacy: { id: f.legacyId, invitations: null } } : null,
    },
    {
      name: 'createLegacy',
      query:
        'mutation($name: String!) { createLegacy(input: { name: $name }) { name viewerRole } }',
      variables: (f, role) => ({ name: `Created by ${role} ${f.secret}` }),
      matrix: [UNAUTH, OK, OK, OK, OK],
      data: (f, role) => ({
        createLegacy: { name: `Created by ${role} ${f.secret}`, viewerRole: 'OWNER' },
      }),
      effect: (f, role) =>
        exists('SELECT 1 FROM legacies WHERE name = $1', [`Created by ${role} ${f.secret}`]),
    },
    {
      name: 'updateLegacy',
      query:
        'mutation($input: UpdateLegacyInput!) { updateLegacy(input: $input) { id description } }',
      variables: (f, role) => ({ input: { id: f.legacyId, description: `Edited by ${role}` } }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      data: (f, role) => ({ updateLegacy: { id: f.legacyId, description: `Edited by ${role}` } }),
      effect: (f, role) =>
        exists('SELECT 1 FROM legacies WHERE id = $1 AND description = $2', [
          f.legacyId,
          `Edited by ${role}`,
        ]),
    },
    {
      name: 'deleteLegacy',
      query: 'mutation($id: ID!) { deleteLegacy(id: $id) }',
      variables: (f) => ({ id: f.legacyId }),
      matrix: [UNAUTH, NF, FORBID, FORBID, OK],
      fresh: true,
      data: () => ({ deleteLegacy: true }),
      effect: async (f) => !(await exists('SELECT 1 FROM legacies WHERE id = $1', [f.legacyId])),
    },
    // -- membership ----------------------------------------------------------------------------
    {
      name: 'addLegacyMember (MEMBER)',
      query: `mutation($input: AddLegacyMemberInput!) {
        addLegacyMember(input: $input) { member { role } invitation { email role } } }`,
      variables: (f, role) => ({
        input: {
          legacyId: f.legacyId,
          email: `added-by-${role}@authz.example.com`,
          role: 'MEMBER',
        },
      }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      data: (_f, role) => ({
        addLegacyMember: {
          member: null,
          invitation: { email: `added-by-${role}@authz.example.com`, role: 'MEMBER' },
        },
      }),
      effect: (f, role) =>
        exists('SELECT 1 FROM legacy_invitations WHERE legacy_id = $1 AND email = $2', [
          f.legacyId,
          `added-by-${role}@authz.example.com`,
        ]),
    },
    {
      name: 'addLegacyMember (OWNER)',
      query: `mutation($input: AddLegacyMemberInput!) {
        addLegacyMember(input: $input) { member { role } invitation { email role } } }`,
      variables: (f, role) => ({
        input: { legacyId: f.legacyId, email: `owner-by-${role}@authz.example.com`, role: 'OWNER' },
      }),
      matrix: [UNAUTH, NF, FORBID, FORBID, OK],
      data: (_f, role) => ({
        addLegacyMember: {
          member: null,
          invitation: { email: `owner-by-${role}@authz.example.com`, role: 'OWNER' },
        },
      }),
      effect: (f, role) =>
        exists('SELECT 1 FROM legacy_invitations WHERE legacy_id = $1 AND email = $2', [
          f.legacyId,
          `owner-by-${role}@authz.example.com`,
        ]),
    },
    {
      name: 'addLegacyMember (an existing account)',
      query: `mutation($input: AddLegacyMemberInput!) {
        addLegacyMember(input: $input) { member { role } invitation { email role } } }`,
      variables: (f) => ({
        input: {
          legacyId: f.legacyId,
          email: users.platformAdmin.email!.toLowerCase(),
          role: 'MEMBER',
        },
      }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      // The same answer as for an unknown email, and no membership until accepted.
      data: () => ({
        addLegacyMember: {
          member: null,
          invitation: { email: users.platformAdmin.email!.toLowerCase(), role: 'MEMBER' },
        },
      }),
      effect: async (f) =>
        (await exists('SELECT 1 FROM legacy_invitations WHERE legacy_id = $1 AND email = $2', [
          f.legacyId,
          users.platformAdmin.email!.toLowerCase(),
        ])) && (await roleOf(f, 'platformAdmin')) === null,
    },
    {
      name: 'myInvitations',
      query: '{ myInvitations { id legacyId legacyName role } }',
      variables: () => ({}),
      matrix: [UNAUTH, OK, OK, OK, OK],
      // Only the invitee sees an invitation (the legacy's name is theirs to see, to decide).
      data: (f, role) => ({
        myInvitations:
          role === 'outsider'
            ? expect.arrayContaining([
                {
                  id: f.outsiderInvitationId,
                  legacyId: f.legacyId,
                  legacyName: `Legacy ${f.secret}`,
                  role: 'MEMBER',
                },
              ])
            : expect.not.arrayContaining([expect.objectContaining({ legacyId: f.legacyId })]),
      }),
    },
    {
      name: 'acceptInvitation',
      query: 'mutation($id: ID!) { acceptInvitation(id: $id) { id viewerRole } }',
      variables: (f) => ({ id: f.outsiderInvitationId }),
      // Only the invitee: a manager cannot accept on someone's behalf.
      matrix: [UNAUTH, OK, NF, NF, NF],
      fresh: true,
      data: (f) => ({ acceptInvitation: { id: f.legacyId, viewerRole: 'MEMBER' } }),
      effect: async (f) => (await roleOf(f, 'outsider')) === 'MEMBER',
    },
    {
      name: 'declineInvitation',
      query: 'mutation($id: ID!) { declineInvitation(id: $id) }',
      variables: (f) => ({ id: f.outsiderInvitationId }),
      matrix: [UNAUTH, OK, NF, NF, NF],
      fresh: true,
      data: () => ({ declineInvitation: true }),
      effect: async (f) =>
        !(await exists('SELECT 1 FROM legacy_invitations WHERE id = $1', [
          f.outsiderInvitationId,
        ])) && (await roleOf(f, 'outsider')) === null,
    },
    {
      name: 'cancelLegacyInvitation',
      query:
        'mutation($legacyId: ID!, $email: String!) { cancelLegacyInvitation(legacyId: $legacyId, email: $email) }',
      variables: (f) => ({ legacyId: f.legacyId, email: f.invitedEmail }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      fresh: true,
      data: () => ({ cancelLegacyInvitation: true }),
      effect: async (f) =>
        !(await exists('SELECT 1 FROM legacy_invitations WHERE legacy_id = $1 AND email = $2', [
          f.legacyId,
          f.invitedEmail,
        ])),
    },
    {
      name: 'setLegacyMemberRole (member -> ADMIN)',
      query: `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role user { id } } }`,
      variables: (f) => ({ input: { legacyId: f.legacyId, userId: ids.other, role: 'ADMIN' } }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      fresh: true,
      data: () => ({ setLegacyMemberRole: { role: 'ADMIN', user: { id: ids.other } } }),
      effect: async (f) => (await roleOf(f, 'other')) === 'ADMIN',
    },
    {
      name: 'setLegacyMemberRole (member -> OWNER)',
      query: `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role user { id } } }`,
      variables: (f) => ({ input: { legacyId: f.legacyId, userId: ids.other, role: 'OWNER' } }),
      matrix: [UNAUTH, NF, FORBID, FORBID, OK],
      fresh: true,
      data: () => ({ setLegacyMemberRole: { role: 'OWNER', user: { id: ids.other } } }),
      effect: async (f) => (await roleOf(f, 'other')) === 'OWNER',
    },
    {
      name: 'setLegacyMemberRole (owner -> MEMBER)',
      query: `mutation($input: SetLegacyMemberRoleInput!) { setLegacyMemberRole(input: $input) { role user { id } } }`,
      variables: (f) => ({ input: { legacyId: f.legacyId, userId: ids.coOwner, role: 'MEMBER' } }),
      matrix: [UNAUTH, NF, FORBID, FORBID, OK],
      fresh: true,
      data: () => ({ setLegacyMemberRole: { role: 'MEMBER', user: { id: ids.coOwner } } }),
      effect: async (f) => (await roleOf(f, 'coOwner')) === 'MEMBER',
    },
    {
      name: 'removeLegacyMember (a member)',
      query: 'mutation($input: RemoveLegacyMemberInput!) { removeLegacyMember(input: $input) }',
      variables: (f) => ({ input: { legacyId: f.legacyId, userId: ids.other } }),
      matrix: [UNAUTH, NF, FORBID, OK, OK],
      fresh: true,
      data: () => ({ removeLegacyMember: true }),
      effect: async (f) => (await roleOf(f, 'other')) === null,
    },
    {
      name: 'removeLegacyMember (an owner)',
      query: 'mutation($input: RemoveLegacyMemberInput!) { removeLegacyMember(input: $input) }',
      variables: (f) => ({ input: { legacyId: f.legacyId, userId: ids.coOwner } }),
      matrix: [UNAUTH, NF, FORBID, FORBID, OK],
      fresh: true,
      data: () => ({ removeLegacyMember: true }),
      effect: async (f) => (await roleOf(f, 'coOwner')) === null,
    },
    {
      name: 'leaveLegacy',
      query: 'mutation($id: ID!) { leaveLegacy(legacyId: $id) }',
      variables: (f) => ({ id: f.legacyId }),
      // The owner may leave because the fixture has a second owner.
      matrix: [UNAUTH, NF, OK, OK, OK],
      fresh: true,
      data: () => ({ leaveLegacy: true }),
      effect: async (f) =>
        (await rows('SELECT 1 FROM legacy_members WHERE legacy_id = $1', [f.legacyId])).length < 5,
    },
    // -- conversations (the fixture's conversation belongs to `member`) ------------------------
    {
      name: 'conversation',
      query: 'query($id: ID!) { conversation(id: $id) { id title } }',
      variables: (f) => ({ id: f.conversationId }),
      matrix: [UNAUTH, NF, OK, NF, NF],
      data: (f) => ({ conversation: { id: f.conversationId, title: `Conversation ${f.secret}` } }),
    },
    {
      name: 'conversation.messages',
      query:
        'query($id: ID!) { conversation(id: $id) { messages(first: 1) { nodes { content } } } }',
      variables: (f) => ({ id: f.conversationId }),
      matrix: [UNAUTH, NF, OK, NF, NF],
      data: (f) => ({
        conversation: { messages: { nodes: [{ content: `Message ${f.secret}` }] } },
      }),
    },
    {
      name: 'conversations',
      query:
        'query($legacyId: ID!) { conversations(legacyId: $legacyId, first: 100) { nodes { id } } }',
      variables: (f) => ({ legacyId: f.legacyId }),
      // Members of the legacy list their own conversations only.
      matrix: [UNAUTH, NF, OK, OK, OK],
      data: (f, role) => ({
        conversations: {
          nodes:
            role === 'member'
              ? expect.arrayContaining([{ id: f.conversationId }])
              : expect.not.arrayContaining([{ id: f.conversationId }]),
        },
      }),
    },
    {
      name: 'leftBehindConversations',
      query: '{ leftBehindConversations(first: 100) { nodes { id } } }',
      variables: () => ({}),
      // Only conversations in legacies one is no longer a member of (tested in
      // invitations-and-limits): the fixture's member is still a member.
      matrix: [UNAUTH, OK, OK, OK, OK],
      data: (f) => ({
        leftBehindConversations: {
          nodes: expect.not.arrayContaining([{ id: f.conversationId }]),
        },
      }),
    },
    {
      name: 'leftBehindFacts',
      query: '{ leftBehindFacts(first: 100) { nodes { id content } } }',
      variables: () => ({}),
      // Only one's own facts in legacies one has left (tested in fact-purge.spec): nobody in the
      // fixture has left it, so the list is empty for everyone.
      matrix: [UNAUTH, OK, OK, OK, OK],
      data: () => ({ leftBehindFacts: { nodes: [] } }),
    },
    {
      name: 'startConversation',
      query:
        'mutation($input: StartConversationInput!) { startConversation(input: $input) { legacyId title } }',
      variables: (f, role) => ({ input: { legacyId: f.legacyId, title: `Started by ${role}` } }),
      matrix: [UNAUTH, NF, OK, OK, OK],
      data: (f, role) => ({
        startConversation: { legacyId: f.legacyId, title: `Started by ${role}` },
      }),
      effect: (f, role) =>
        exists('SELECT 1 FROM conversations WHERE legacy_id = $1 AND title = $2', [
          f.legacyId,
          `Started by ${role}`,
        ]),
    },
    {
      name: 'sendMessage',
      query:
        'mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { content } } }',
      variables: (f, role) => ({
        input: { conversationId: f.conversationId, content: `Sent by ${role}` },
      }),
      matrix: [UNAUTH, NF, OK, NF, NF],
      data: (_f, role) => ({ sendMessage: { message: { content: `Sent by ${role}` } } }),
      effect: (f, role) =>
        exists('SELECT 1 FROM messages WHERE conversation_id = $1 AND content = $2', [
          f.conversationId,
          `Sent by ${role}`,
        ]),
    },
    {
      name: 'recordAssistantMessage',
      query:
        'mutation($input: RecordAssistantMessageInput!) { recordAssistantMessage(input: $input) { role content } }',
      variables: (f, role) => ({
        input: { conversationId: f.conversationId, content: `Recorded by ${role}` },
      }),
      matrix: [UNAUTH, NF, OK, NF, NF],
      data: (_f, role) => ({
        recordAssistantMessage: { role: 'ASSISTANT', content: `Recorded by ${role}` },
      }),
      effect: (f, role) =>
        exists('SELECT 1 FROM messages WHERE conversation_id = $1 AND content = $2', [
          f.conversationId,
          `Recorded by ${role}`,
        ]),
    },
    {
      name: 'importConversation',
      query: `mutation($input: ImportConversationInput!) {
        importConversation(input: $input) { importedCount conversation { legacyId title } } }`,
      variables: (f, role) => ({
        input: {
          legacyId: f.legacyId,
          title: `Imported by ${role}`,
          messages: [{ role: 'USER', content: 'hello', occurredAt: '2024-01-01T00:00:00.000Z' }],
        },
      }),
      matrix: [UNAUTH, NF, OK, OK, OK],
      data: (f, role) => ({
        importConversation: {
          importedCount: 1,
          conversation: { legacyId: f.legacyId, title: `Imported by ${role}` },
        },
      }),
      effect: (f, role) =>
        exists('SELECT 1 FROM conversations WHERE legacy_id = $1 AND title = $2', [
          f.legacyId,
          `Imported by ${role}`,
        ]),
    },
    {
      name: 'setConversationRemember',
      query:
        'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: false) { id remember } }',
      variables: (f) => ({ id: f.conversationId }),
      matrix: [UNAUTH, NF, OK, NF, NF],
      fresh: true,
      data: (f) => ({ setConversationRemember: { id: f.conversationId, remember: false } }),
      effect: (f) =>
        exists(
          'SELECT 1 FROM conversation_participants WHERE conversation_id = $1 AND NOT remember',
          [f.conversationId],
        ),
    },
    {
      name: 'deleteConversation',
      query: 'mutation($id: ID!) { deleteConversation(id: $id) }',
      variables: (f) => ({ id: f.conversationId }),
      matrix: [UNAUTH, NF, OK, NF, NF],
      fresh: true,
      data: () => ({ deleteConversation: true }),
      effect: async (f) =>
        !(await exists('SELECT 1 FROM conversations WHERE id = $1', [f.conversationId])),
    },
  ];

  const table = operations.flatMap((operation) =>
    ROLES.map((role, i) => ({
      name: operation.name,
      role,
      outcome: operation.matrix[i],
      operation,
    })),
  );

  it.each(table)('$name as $role: $outcome', async ({ role, outcome, operation }) => {
    const f = operation.fresh && outcome === OK ? await createFixture() : shared;
    const res: GqlResponse = await t.gql(operation.query, operation.variables(f, role), as(role));
    if (outcome === OK) {
      expect(res.errors).toBeUndefined();
      if (operation.data) expect(res.data).toMatchObject(operation.data(f, role));
    } else {
      expect(res.errors).toHaveLength(1);
      expect(res.errors![0].extensions).toMatchObject({ code: outcome });
      expect(res.errors![0].extensions).not.toHaveProperty('stacktrace');
      expect(res.data ?? null).toEqual(operation.refusedData?.(f, outcome) ?? null);
      expect(JSON.stringify(res)).not.toContain(f.secret);
    }
    if (operation.effect) expect(await operation.effect(f, role)).toBe(outcome === OK);
  });

  describe('platform operations', () => {
    type Caller = 'anonymous' | 'signed-in user' | 'platform admin';
    const failedJob = async () =>
      (
        await rows(
          `INSERT INTO jobs (type, key, status, attempts, max_attempts, last_error)
           VALUES ('authz.test', $1, 'FAILED', 5, 5, 'boom') RETURNING id`,
          [randomUUID()],
        )
      )[0].id as string;
    const caller = (c: Caller) =>
      c === 'anonymous' ? null : c === 'platform admin' ? users.platformAdmin : users.owner;

    const platformTable: {
      name: string;
      caller: Caller;
      outcome: Outcome;
      run: (jobId: string, who: TestUser | null) => Promise<GqlResponse>;
      check: (jobId: string, res: GqlResponse, allowed: boolean) => Promise<void>;
    }[] = [];
    const failedJobsQuery = {
      name: 'failedJobs',
      run: (_jobId: string, who: TestUser | null) =>
        t.gql('{ failedJobs(first: 100) { nodes { id status lastError } } }', {}, who),
      check: async (jobId: string, res: GqlResponse, allowed: boolean) => {
        if (!allowed) return;
        expect(res.data).toEqual({
          failedJobs: {
            nodes: expect.arrayContaining([{ id: jobId, status: 'FAILED', lastError: 'boom' }]),
          },
        });
      },
    };
    const retryJobMutation = {
      name: 'retryJob',
      run: (jobId: string, who: TestUser | null) =>
        t.gql(
          'mutation($id: ID!) { retryJob(id: $id) { id status attempts } }',
          { id: jobId },
          who,
        ),
      check: async (jobId: string, res: GqlResponse, allowed: boolean) => {
        if (allowed)
          expect(res.data).toEqual({ retryJob: { id: jobId, status: 'PENDING', attempts: 0 } });
        const [job] = await rows('SELECT status FROM jobs WHERE id = $1', [jobId]);
        expect(job.status).toBe(allowed ? 'PENDING' : 'FAILED');
      },
    };
    const embeddingStatusQuery = {
      name: 'embeddingStatus',
      run: (_jobId: string, who: TestUser | null) =>
        t.gql('{ embeddingStatus { configuredModel dimensions kinds { kind } } }', {}, who),
      check: async (_jobId: string, res: GqlResponse, allowed: boolean) => {
        if (!allowed) return;
        expect(res.data).toMatchObject({
          embeddingStatus: { configuredModel: 'local:use-lite-512', dimensions: 512 },
        });
      },
    };
    const auditLogQuery = {
      name: 'auditLog',
      run: (_jobId: string, who: TestUser | null) =>
        t.gql('{ auditLog(first: 50) { nodes { operation actorId } } }', {}, who),
      check: async (_jobId: string, res: GqlResponse, allowed: boolean) => {
        if (!allowed) return;
        const nodes = (res.data as { auditLog: { nodes: { actorId: string }[] } }).auditLog.nodes;
        expect(nodes.every((n) => n.actorId === ids.platformAdmin)).toBe(true);
      },
    };
    for (const op of [failedJobsQuery, retryJobMutation, embeddingStatusQuery, auditLogQuery]) {
      //                        anonymous  signed-in user  platform admin
      const outcomes: Outcome[] = [UNAUTH, FORBID, OK];
      (['anonymous', 'signed-in user', 'platform admin'] as Caller[]).forEach((c, i) =>
        platformTable.push({ ...op, caller: c, outcome: outcomes[i] }),
      );
    }

    it.each(platformTable)(
      '$name as $caller: $outcome',
      async ({ caller: c, outcome, run, check }) => {
        const jobId = await failedJob();
        const res = await run(jobId, caller(c));
        if (outcome === OK) {
          expect(res.errors).toBeUndefined();
        } else {
          expect(res.errors).toHaveLength(1);
          expect(res.errors![0].extensions).toMatchObject({ code: outcome });
          expect(res.data ?? null).toBeNull();
          expect(JSON.stringify(res)).not.toContain(jobId);
        }
        await check(jobId, res, outcome === OK);
      },
    );
  });

  it('covers every root field of the schema', () => {
    const covered = new Set(operations.map((o) => o.name.split(/[ .]/)[0]));
    for (const name of ['messageAdded', 'failedJobs', 'retryJob', 'embeddingStatus', 'auditLog'])
      covered.add(name);
    // Feature modules keep their own authorization tables in test/e2e/*-authorization.e2e-spec.ts,
    // one `authorizes: '<rootField>'` entry per operation they add.
    for (const file of readdirSync('test/e2e').filter((f) =>
      f.endsWith('-authorization.e2e-spec.ts'),
    )) {
      for (const match of readFileSync(`test/e2e/${file}`, 'utf8').matchAll(/authorizes: '(\w+)'/g))
        covered.add(match[1]);
    }
    const schema = buildSchema(readFileSync('schema.gql', 'utf8'));
    const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()];
    const fields = roots.flatMap((type) => Object.keys(type?.getFields() ?? {}));
    expect([...covered].sort()).toEqual(fields.sort());
  });

  describe('hiding existence', () => {
    it('answers an outsider exactly as it answers an unknown id', async () => {
      const unknown = randomUUID();
      const q = 'query($id: ID!) { legacy(id: $id) { id } }';
      const hidden = await t.gql(q, { id: shared.legacyId }, users.outsider);
      const missing = await t.gql(q, { id: unknown }, users.outsider);
      expect(hidden.errors![0].message).toBe(missing.errors![0].message);
      expect(hidden.errors![0].extensions).toEqual(missing.errors![0].extensions);

      const c = 'query($id: ID!) { conversation(id: $id) { id } }';
      const other = await t.gql(c, { id: shared.conversationId }, users.owner);
      const none = await t.gql(c, { id: unknown }, users.owner);
      expect(other.errors![0].message).toBe(none.errors![0].message);
      expect(other.errors![0].extensions).toEqual(none.errors![0].extensions);
    });

    it('closes a conversation to its author once they leave the legacy', async () => {
      const f = await createFixture();
      await ok(
        'mutation($id: ID!) { leaveLegacy(legacyId: $id) }',
        { id: f.legacyId },
        users.member,
      );
      const res = await t.gql(
        'query($id: ID!) { conversation(id: $id) { id } }',
        { id: f.conversationId },
        users.member,
      );
      expect(res.errors![0].extensions!.code).toBe(NF);
      expect(res.data).toBeNull();
    });
  });

  describe('messageAdded', () => {
    const MESSAGE_ADDED = `subscription($id: ID!) { messageAdded(conversationId: $id) { content } }`;
    const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`;
    const send = (conversationId: string, content: string, who: TestUser = users.member) =>
      ok(SEND, { input: { conversationId, content } }, who);

    const subRows = ROLES.map((role, i) => ({
      role,
      outcome: ([UNAUTH, NF, OK, NF, NF] as Matrix)[i],
    }));

    /** A refused subscription reports its errors in a `next` (then `complete`) or an `error`. */
    async function refused(role: Role) {
      const sub = subscribe<{ messageAdded: { content: string } }>(t.ws(as(role)), MESSAGE_ADDED, {
        id: shared.conversationId,
      });
      const events = await sub.waitFor(1);
      const errors = events[0]?.errors ?? (sub.error as GqlResponse['errors']) ?? [];
      return { sub, events, errors };
    }

    it.each(subRows)('messageAdded as $role: $outcome', async ({ role, outcome }) => {
      if (outcome === OK) {
        const sub = subscribe<{ messageAdded: { content: string } }>(
          t.ws(as(role)),
          MESSAGE_ADDED,
          { id: shared.conversationId },
        );
        await sub.ready;
        await send(shared.conversationId, `Live ${shared.secret}`);
        const events = await sub.waitFor(1);
        expect(events[0]).toEqual({ data: { messageAdded: { content: `Live ${shared.secret}` } } });
        sub.unsubscribe();
        return;
      }
      const { sub, events, errors } = await refused(role);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        path: ['messageAdded'],
        message: outcome === UNAUTH ? expect.stringMatching(/sign in/i) : 'Conversation not found.',
      });
      expect(events.every((e) => e.data == null)).toBe(true);
      // Nothing sent afterwards reaches it.
      await send(shared.conversationId, `After refusal ${shared.secret}`);
      await new Promise((r) => setTimeout(r, 100));
      expect(events).toHaveLength(1);
      expect(JSON.stringify(events)).not.toContain(shared.secret);
      sub.unsubscribe();
    });

    it.each(subRows.filter((r) => r.outcome !== OK))(
      'messageAdded as $role carries extensions.code $outcome',
      async ({ role, outcome }) => {
        const { sub, errors } = await refused(role);
        sub.unsubscribe();
        expect(errors[0]?.extensions).toMatchObject({ code: outcome });
      },
    );

    it("never delivers another user's messages to a subscription on one's own conversation", async () => {
      const start = `mutation($input: StartConversationInput!) { startConversation(input: $input) { id } }`;
      const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Outsider family" }) { id } }',
        {},
        users.outsider,
      );
      const outsiderConversation = (
        await ok<{ startConversation: { id: string } }>(
          start,
          { input: { legacyId: createLegacy.id } },
          users.outsider,
        )
      ).startConversation.id;
      const ownerConversation = (
        await ok<{ startConversation: { id: string } }>(
          start,
          { input: { legacyId: shared.legacyId } },
          users.owner,
        )
      ).startConversation.id;

      const outsiderSub = subscribe<{ messageAdded: { content: string } }>(
        t.ws(users.outsider),
        MESSAGE_ADDED,
        { id: outsiderConversation },
      );
      const ownerSub = subscribe<{ messageAdded: { content: string } }>(
        t.ws(users.owner),
        MESSAGE_ADDED,
        { id: ownerConversation },
      );
      await Promise.all([outsiderSub.ready, ownerSub.ready]);

      await send(shared.conversationId, `Private ${shared.secret}`);
      await send(outsiderConversation, 'outsider speaking', users.outsider);
      await send(ownerConversation, 'owner speaking', users.owner);
      const outsiderEvents = await outsiderSub.waitFor(1);
      const ownerEvents = await ownerSub.waitFor(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(outsiderEvents.map((e) => e.data?.messageAdded.content)).toEqual([
        'outsider speaking',
      ]);
      expect(ownerEvents.map((e) => e.data?.messageAdded.content)).toEqual(['owner speaking']);
      outsiderSub.unsubscribe();
      ownerSub.unsubscribe();
    });
  });
});
