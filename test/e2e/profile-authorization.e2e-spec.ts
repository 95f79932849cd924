import { DataSource } from 'typeorm';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * A profile is its member's alone: every operation acts on the caller's own profile and there
 * is no way to name another's. Anyone else (another member, an admin of a legacy they share,
 * a platform admin) reads nothing of it, changes nothing of it, and never meets it in recall
 * or a context. Anonymous callers are refused.
 */
type Caller = 'anonymous' | 'outsider' | 'member' | 'admin';

interface Fixture {
  legacyId: string;
}

interface Row {
  authorizes: string;
  caller: Caller;
  code: 'UNAUTHENTICATED' | 'NOT_FOUND' | 'OK';
  op: (f: Fixture) => { query: string; variables?: Record<string, unknown> };
}

const SECRET = 'periwinkle accordion';

const READ = () => ({ query: '{ profile { consent preferredName interests notes } }' });
const UPDATE = () => ({
  query: 'mutation { updateProfile(input: { interests: ["chess"] }) { interests } }',
});
const RELATE = (f: Fixture) => ({
  query: `mutation($l: ID!) { updateProfile(input: { relationships: [{ legacyId: $l, relationship: "friend" }] }) {
    relationships { legacyId relationship } } }`,
  variables: { l: f.legacyId },
});
const CONSENT = (value: boolean) => () => ({
  query: `mutation { setProfileConsent(consent: ${value}) { consent interests } }`,
});

const table: Row[] = [
  { authorizes: 'profile', caller: 'anonymous', code: 'UNAUTHENTICATED', op: READ },
  { authorizes: 'profile', caller: 'outsider', code: 'OK', op: READ },
  { authorizes: 'profile', caller: 'member', code: 'OK', op: READ },
  { authorizes: 'profile', caller: 'admin', code: 'OK', op: READ },
  { authorizes: 'updateProfile', caller: 'anonymous', code: 'UNAUTHENTICATED', op: UPDATE },
  { authorizes: 'updateProfile', caller: 'outsider', code: 'OK', op: UPDATE },
  { authorizes: 'updateProfile', caller: 'outsider', code: 'NOT_FOUND', op: RELATE },
  { authorizes: 'updateProfile', caller: 'member', code: 'OK', op: RELATE },
  { authorizes: 'updateProfile', caller: 'admin', code: 'OK', op: UPDATE },
  {
    authorizes: 'setProfileConsent',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: CONSENT(false),
  },
  { authorizes: 'setProfileConsent', caller: 'member', code: 'OK', op: CONSENT(true) },
  { authorizes: 'setProfileConsent', caller: 'admin', code: 'OK', op: CONSENT(false) },
  { authorizes: 'setProfileConsent', caller: 'outsider', code: 'OK', op: CONSENT(true) },
];

describe('profile authorization', () => {
  let t: TestApp;
  let ds: DataSource;
  const users = {} as Record<'owner' | 'member' | 'admin' | 'outsider' | 'platform', TestUser>;
  let fixture: Fixture;
  let ownerId: string;
  let conversationId: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const callerOf = (c: Caller) => (c === 'anonymous' ? null : users[c]);
  /** The owner's profile as stored: consent and every entry with its vector count. */
  const ownerRows = async () => ({
    profile: await ds.query(`SELECT consent, updated_at FROM profiles WHERE user_id = $1`, [
      ownerId,
    ]),
    entries: await ds.query(
      `SELECT e.id, e.field, e.text, e.updated_at,
              (SELECT count(*)::int FROM embeddings v WHERE v.kind = 'profile' AND v.item_id = e.id) AS vectors
         FROM profile_entries e WHERE e.user_id = $1 ORDER BY e.id`,
      [ownerId],
    ),
  });

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    for (const who of ['owner', 'member', 'admin', 'outsider', 'platform'] as const) {
      users[who] = await t.user(`profile-authz-${who}`, {
        email: `${who}@profile-authz.example.com`,
        admin: who === 'platform',
      });
    }
    const legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Uncle Piotr" }) { id } }',
        {},
        users.owner,
      )
    ).createLegacy.id;
    await joinLegacy(t, users.owner, legacyId, users.member);
    await joinLegacy(t, users.owner, legacyId, users.admin, 'ADMIN');
    await joinLegacy(t, users.owner, legacyId, users.platform);
    fixture = { legacyId };
    await ok(
      `mutation($l: ID!) { updateProfile(input: { preferredName: "Pia", interests: ["${SECRET}"],
         notes: "Loves the ${SECRET} tune", relationships: [{ legacyId: $l, relationship: "niece of the ${SECRET}" }] }) { consent } }`,
      { l: legacyId },
      users.owner,
    );
    await ok('mutation { setProfileConsent(consent: true) { consent } }', {}, users.owner);
    ownerId = (
      await ds.query<{ id: string }[]>(`SELECT id FROM users WHERE subject LIKE $1`, [
        '%profile-authz-owner',
      ])
    )[0].id;
    conversationId = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        users.owner,
      )
    ).startConversation.id;
  });
  afterAll(() => t?.close());

  it.each(table)('$authorizes as $caller: $code', async ({ caller, code, op }) => {
    const before = await ownerRows();
    const { query, variables } = op(fixture);
    const res: GqlResponse = await t.gql(query, variables ?? {}, callerOf(caller));
    if (code === 'OK') {
      expect(res.errors).toBeUndefined();
    } else {
      expect(res.errors![0].extensions).toMatchObject({ code });
      expect(res.data ?? null).toBeNull();
    }
    // Nobody but the owner reads or changes the owner's profile.
    expect(JSON.stringify(res)).not.toContain(SECRET);
    expect(await ownerRows()).toEqual(before);
  });

  it('keeps the profile out of everyone else’s recall and context, admins included', async () => {
    // The others' own profiles, with consent, must not open the owner's.
    for (const who of ['member', 'admin', 'platform'] as const) {
      await ok('mutation { setProfileConsent(consent: true) { consent } }', {}, users[who]);
      const recall = await ok<{
        recall: { edges: { node: { sourceType: string; text: string } }[] };
      }>(
        `query($l: ID!) { recall(legacyId: $l, query: "what do you know about my interests and notes") {
           edges { node { sourceType text } } } }`,
        { l: fixture.legacyId },
        users[who],
      );
      expect(JSON.stringify(recall)).not.toContain(SECRET);
      const conversation = (
        await ok<{ startConversation: { id: string } }>(
          'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
          { l: fixture.legacyId },
          users[who],
        )
      ).startConversation.id;
      const context = await ok<{ context: { system: string } }>(
        `query($c: ID!) { context(conversationId: $c, query: "What are my interests?") { system } }`,
        { c: conversation },
        users[who],
      );
      expect(context.context.system).not.toContain(SECRET);
      // The owner's conversation is theirs: NOT_FOUND, as for any other.
      const theirs = await t.gql(
        `query($c: ID!) { context(conversationId: $c, query: "What are my interests?") { system } }`,
        { c: conversationId },
        users[who],
      );
      expect(theirs.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    }
    // A platform admin's debug view of the owner's conversation leaves the profile out.
    const debug = await ok(
      `query($c: ID!) { retrievalDebug(conversationId: $c, query: "What are my interests?") {
         candidates { sourceType text } } }`,
      { c: conversationId },
      users.platform,
    );
    expect(JSON.stringify(debug)).not.toContain(SECRET);
    // While the owner's own context has it.
    const own = await ok<{ context: { system: string } }>(
      `query($c: ID!) { context(conversationId: $c, query: "What are my interests?") { system } }`,
      { c: conversationId },
      users.owner,
    );
    expect(own.context.system).toContain(SECRET);
  });
});
