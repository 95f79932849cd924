import { DataSource } from 'typeorm';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * A member's profile: stored on their word, used in their context and recall only with their
 * consent, forgotten entry by entry from recall, and gone without a trace when consent goes.
 */

// Words that appear nowhere but in the profile, so that any copy of them can be found.
const MARK = {
  name: 'Quillonette',
  town: 'Brambleworth Quay',
  interest: 'zitherwork',
  rel: 'goddaughter who kept the zinnia ledger',
  otherRel: 'neighbour from the marmot lane',
  notes: 'Prefers the story of the velvet tramcar',
};

const PROFILE_FIELDS = `consent consentChangedAt preferredName pronouns birthday homeTown
  relationships { legacyId legacyName relationship } languages interests conversationGoals notes updatedAt`;

interface Profile {
  consent: boolean;
  preferredName: string | null;
  birthday: string | null;
  homeTown: string | null;
  relationships: { legacyId: string; legacyName: string; relationship: string }[];
  languages: string[];
  interests: string[];
  notes: string | null;
}

interface RecallItem {
  id: string;
  sourceType: string;
  sourceId: string;
  text: string;
  forgettable: boolean;
}

describe('profile', () => {
  let t: TestApp;
  let ds: DataSource;
  let owner: TestUser;
  let member: TestUser;
  let admin: TestUser;
  let platformAdmin: TestUser;
  let legacyId: string;
  let otherLegacyId: string;
  let conversationId: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const update = (input: Record<string, unknown>, as = owner) =>
    t.gql<{ updateProfile: Profile }>(
      `mutation($input: UpdateProfileInput!) { updateProfile(input: $input) { ${PROFILE_FIELDS} } }`,
      { input },
      as,
    );
  const consent = (value: boolean, as = owner) =>
    ok<{ setProfileConsent: Profile }>(
      `mutation($c: Boolean!) { setProfileConsent(consent: $c) { ${PROFILE_FIELDS} } }`,
      { c: value },
      as,
    ).then((d) => d.setProfileConsent);
  const profile = (as = owner) =>
    ok<{ profile: Profile }>(`{ profile { ${PROFILE_FIELDS} } }`, {}, as).then((d) => d.profile);
  const recall = (query: string, as = owner, legacy = legacyId) =>
    ok<{ recall: { edges: { node: RecallItem }[] } }>(
      `query($l: ID!, $q: String!) { recall(legacyId: $l, query: $q, first: 20) {
         edges { node { id sourceType sourceId text forgettable } } } }`,
      { l: legacy, q: query },
      as,
    ).then((d) => d.recall.edges.map((e) => e.node));
  const context = (query: string, as = owner, conversation = conversationId) =>
    ok<{
      context: {
        system: string;
        sections: { name: string; tokens: number; items: { sourceId: string }[] }[];
      };
    }>(
      `query($c: ID!, $q: String!) { context(conversationId: $c, query: $q) {
         system sections { name tokens items { sourceId sourceType } } } }`,
      { c: conversation, q: query },
      as,
    ).then((d) => d.context);
  const vectors = (userId: string) =>
    ds
      .query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM embeddings WHERE kind = 'profile' AND user_id = $1`,
        [userId],
      )
      .then((r) => r[0].n);
  const userId = async (sub: string) =>
    (await ds.query<{ id: string }[]>(`SELECT id FROM users WHERE subject LIKE $1`, [`%${sub}`]))[0]
      .id;

  /** Every text, JSON or array column of every table that holds `needle`, as table.column. */
  async function traces(needle: string): Promise<string[]> {
    const columns = await ds.query<{ table: string; column: string }[]>(
      `SELECT c.table_name AS "table", c.column_name AS "column"
         FROM information_schema.columns c
         JOIN information_schema.tables tb
           ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
        WHERE c.table_schema = 'public' AND tb.table_type = 'BASE TABLE'
          AND c.data_type IN ('text', 'jsonb', 'json', 'character varying', 'ARRAY')`,
    );
    const found: string[] = [];
    for (const { table, column } of columns) {
      const [row] = await ds.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}"::text ILIKE $1`,
        [`%${needle}%`],
      );
      if (row.n > 0) found.push(`${table}.${column}`);
    }
    return found;
  }

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    owner = await t.user('profile-owner', { email: 'owner@profile.example.com' });
    member = await t.user('profile-member', { email: 'member@profile.example.com' });
    admin = await t.user('profile-admin', { email: 'admin@profile.example.com' });
    platformAdmin = await t.user('profile-platform', {
      email: 'platform@profile.example.com',
      admin: true,
    });
    const created = async (name: string) =>
      (
        await ok<{ createLegacy: { id: string } }>(
          'mutation($n: String!) { createLegacy(input: { name: $n }) { id } }',
          { n: name },
          owner,
        )
      ).createLegacy.id;
    legacyId = await created('Grandpa Tomás');
    otherLegacyId = await created('Aunt Ida');
    await joinLegacy(t, owner, legacyId, member);
    await joinLegacy(t, owner, legacyId, admin, 'ADMIN');
    await joinLegacy(t, owner, legacyId, platformAdmin);
    conversationId = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        owner,
      )
    ).startConversation.id;
  });
  afterAll(() => t?.close());

  it('starts empty, without consent', async () => {
    expect(await profile()).toMatchObject({
      consent: false,
      preferredName: null,
      relationships: [],
      interests: [],
    });
  });

  it('refuses input it cannot take, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ birthday: '12/04/1961' }, 'birthday'],
      [{ birthday: '2001-02-29' }, 'birthday'],
      [{ birthday: '2999-01-01' }, 'birthday'],
      [{ preferredName: 'x'.repeat(81) }, 'preferredName'],
      [{ interests: Array.from({ length: 21 }, (_, i) => `interest ${i}`) }, 'interests'],
      [{ interests: ['y'.repeat(81)] }, 'interests'],
      [{ languages: ['en', '<script>'] }, 'languages'],
      [{ notes: 'z'.repeat(4001) }, 'notes'],
      [
        {
          relationships: [
            { legacyId, relationship: 'grandson' },
            { legacyId, relationship: 'nephew' },
          ],
        },
        'relationships.1.legacyId',
      ],
      [{ relationships: [{ legacyId: 'not-a-uuid', relationship: 'x' }] }, 'relationships'],
    ];
    for (const [input, field] of cases) {
      const res = await update(input);
      expect(res.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(String(res.errors![0].extensions!.field)).toContain(field);
    }
    expect(await profile()).toMatchObject({ preferredName: null, interests: [] });
  });

  it('takes a relationship only to a legacy the member is in, as if others did not exist', async () => {
    const outsider = await t.user('profile-outsider', { email: 'outsider@profile.example.com' });
    const res = await update({ relationships: [{ legacyId, relationship: 'stranger' }] }, outsider);
    expect(res.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    const unknown = await update(
      {
        relationships: [
          { legacyId: '00000000-0000-4000-8000-000000000000', relationship: 'stranger' },
        ],
      },
      outsider,
    );
    expect(unknown.errors![0].message).toBe(res.errors![0].message);
    expect((await profile(outsider)).relationships).toEqual([]);
  });

  it('stores without consent, but neither embeds nor uses it', async () => {
    const res = await update({
      preferredName: `  ${MARK.name} `,
      pronouns: 'she/her',
      birthday: '1961-04-12',
      homeTown: MARK.town,
      languages: ['en', 'Irish', 'en'],
      interests: [MARK.interest, 'gardening'],
      conversationGoals: 'Remember how Tomás told stories at the harbour.',
      notes: MARK.notes,
      relationships: [
        { legacyId, relationship: MARK.rel },
        { legacyId: otherLegacyId, relationship: MARK.otherRel },
      ],
    });
    expect(res.errors).toBeUndefined();
    expect(res.data!.updateProfile).toMatchObject({
      consent: false,
      preferredName: MARK.name,
      languages: ['en', 'Irish'],
      interests: [MARK.interest, 'gardening'],
    });
    expect(res.data!.updateProfile.relationships).toHaveLength(2);
    expect(await vectors(await userId('profile-owner'))).toBe(0);
    const ctx = await context('What are my interests?');
    expect(ctx.sections.map((s) => s.name)).not.toContain('PROFILE');
    expect(ctx.system).not.toContain(MARK.interest);
    const found = await recall('what do you know about my interests');
    expect(found.filter((r) => r.sourceType === 'PROFILE')).toEqual([]);
  });

  it('with consent: one vector per entry, a short profile section, and recall by field', async () => {
    expect((await consent(true)).consent).toBe(true);
    // 8 fields and 2 relationships.
    expect(await vectors(await userId('profile-owner'))).toBe(10);

    const ctx = await context('What are my interests?');
    const section = ctx.sections.find((s) => s.name === 'PROFILE');
    expect(section).toBeDefined();
    expect(ctx.system).toContain(MARK.name);
    // A relationship is used only in its own legacy's context.
    expect(ctx.system).toContain(MARK.rel);
    expect(ctx.system).not.toContain(MARK.otherRel);
    expect(section!.items.map((i) => i.sourceId)).toContain('interests');
    // Short, within its own cap (PROFILE_CONTEXT_TOKENS, 150) inside the shared budget.
    expect(section!.tokens).toBeLessThanOrEqual(150);

    const found = await recall('what do you know about my interests');
    const interests = found.find((r) => r.id === 'profile:interests');
    expect(interests).toMatchObject({
      sourceType: 'PROFILE',
      sourceId: 'interests',
      forgettable: true,
    });
    expect(interests!.text).toContain(MARK.interest);
    expect(JSON.stringify(found)).not.toContain(MARK.otherRel);
    // By meaning: the entry the question's vector clearly points to, and none for others.
    expect((await recall('what do I enjoy doing in my free time')).map((r) => r.id)).toContain(
      'profile:interests',
    );
    const cooking = await recall('what did grandpa cook on sundays');
    expect(cooking.filter((r) => r.sourceType === 'PROFILE')).toEqual([]);
    const inOther = await recall('how am I related to her', owner, otherLegacyId);
    expect(inOther.map((r) => r.id)).toContain(`profile:relationship:${otherLegacyId}`);
    expect(JSON.stringify(inOther)).not.toContain(MARK.rel);
  });

  it('a change re-embeds only what changed, and a cleared field takes its vector', async () => {
    const owned = await userId('profile-owner');
    const before = await ds.query<{ item_id: string; created_at: Date }[]>(
      `SELECT item_id, created_at FROM embeddings WHERE kind = 'profile' AND user_id = $1`,
      [owned],
    );
    expect((await update({ pronouns: null, preferredName: MARK.name })).errors).toBeUndefined();
    expect(await vectors(owned)).toBe(9);
    const after = await ds.query<{ item_id: string; created_at: Date }[]>(
      `SELECT item_id, created_at FROM embeddings WHERE kind = 'profile' AND user_id = $1`,
      [owned],
    );
    const kept = new Map(before.map((r) => [r.item_id, String(r.created_at)]));
    for (const row of after) expect(String(row.created_at)).toBe(kept.get(row.item_id));
  });

  it('forgets an entry from recall: the field and its vector go now', async () => {
    const owned = await userId('profile-owner');
    const res = await ok<{ forgetRecallItem: { recallItemId: string; forgotten: boolean } }>(
      'mutation { forgetRecallItem(id: "profile:interests") { recallItemId sourceType forgotten } }',
      {},
      owner,
    );
    expect(res.forgetRecallItem).toMatchObject({
      recallItemId: 'profile:interests',
      forgotten: true,
    });
    expect((await profile()).interests).toEqual([]);
    expect(await vectors(owned)).toBe(8);
    const again = await t.gql(
      'mutation { forgetRecallItem(id: "profile:interests") { forgotten } }',
      {},
      owner,
    );
    expect(again.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    const bogus = await t.gql(
      'mutation { forgetRecallItem(id: "profile:password") { forgotten } }',
      {},
      owner,
    );
    expect(bogus.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    // Another member cannot forget the owner's entry: ids name the caller's own profile only.
    const theirs = await t.gql(
      `mutation { forgetRecallItem(id: "profile:relationship:${legacyId}") { forgotten } }`,
      {},
      member,
    );
    expect(theirs.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await profile()).relationships).toHaveLength(2);
    expect((await update({ interests: [MARK.interest] })).errors).toBeUndefined();
  });

  it('never shows it to another member, an admin of the legacy, or a platform admin', async () => {
    for (const other of [member, admin, platformAdmin]) {
      const theirs = await profile(other);
      expect(theirs).toMatchObject({ consent: false, preferredName: null, relationships: [] });
      for (const q of ['what do you know about my interests', 'what about gardening']) {
        const found = await recall(q, other);
        expect(found.filter((r) => r.sourceType === 'PROFILE')).toEqual([]);
        expect(JSON.stringify(found)).not.toContain(MARK.interest);
      }
    }
    // The platform admin's debug view of the owner's conversation leaves the profile out.
    const debug = await ok<{
      retrievalDebug: { candidates: { sourceType: string; text: string }[] };
    }>(
      `query($c: ID!) { retrievalDebug(conversationId: $c, query: "What are my interests?") {
         candidates { sourceType text } } }`,
      { c: conversationId },
      platformAdmin,
    );
    expect(debug.retrievalDebug.candidates.map((c) => c.sourceType)).not.toContain('PROFILE');
    expect(JSON.stringify(debug)).not.toContain(MARK.interest);
    // The owner's own debug view shows what their agent gets.
    const own = await ok<{ retrievalDebug: { candidates: { sourceType: string }[] } }>(
      `query($c: ID!) { retrievalDebug(conversationId: $c, query: "What are my interests?") {
         candidates { sourceType } } }`,
      { c: conversationId },
      owner,
    );
    expect(own.retrievalDebug.candidates.map((c) => c.sourceType)).toContain('PROFILE');
  });

  it('revoking consent deletes every entry and vector at once, leaving no trace anywhere', async () => {
    const owned = await userId('profile-owner');
    const ids = (
      await ds.query<{ id: string }[]>(`SELECT id FROM profile_entries WHERE user_id = $1`, [owned])
    ).map((r) => r.id);
    expect(ids.length).toBeGreaterThan(0);
    for (const mark of Object.values(MARK)) expect(await traces(mark)).not.toEqual([]);

    const revoked = await consent(false);
    expect(revoked).toMatchObject({
      consent: false,
      preferredName: null,
      homeTown: null,
      relationships: [],
      languages: [],
      interests: [],
      notes: null,
    });
    const [left] = await ds.query<{ entries: number; vectors: number; byId: number }[]>(
      `SELECT (SELECT count(*)::int FROM profile_entries WHERE user_id = $1) AS entries,
              (SELECT count(*)::int FROM embeddings WHERE kind = 'profile'
                 AND (user_id = $1 OR item_id = ANY($2::uuid[]))) AS vectors,
              (SELECT count(*)::int FROM embeddings WHERE item_id = ANY($2::uuid[])) AS "byId"`,
      [owned, ids],
    );
    expect(left).toEqual({ entries: 0, vectors: 0, byId: 0 });
    // Not a copy of any of it in any table: history, audit, metrics, jobs, anywhere.
    for (const mark of Object.values(MARK)) expect(await traces(mark)).toEqual([]);
    const [row] = await ds.query<{ consent: boolean }[]>(
      `SELECT consent FROM profiles WHERE user_id = $1`,
      [owned],
    );
    expect(row.consent).toBe(false);
    // A vector written late for a deleted entry (the sweeper's, racing the revocation) is refused.
    const late = (kind: string) =>
      ds.query(
        `INSERT INTO embeddings (kind, item_id, model, embedding, user_id)
         SELECT $3, $1, model, array_fill(0.1, ARRAY[dimensions])::real[]::vector, $2
           FROM embedding_models WHERE state = 'ACTIVE'`,
        [ids[0], owned, kind],
      );
    await late('profile');
    expect(await vectors(owned)).toBe(0);
    // The same statement for another kind does write (so the refusal above is the guard's).
    await late('probe');
    const [probe] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM embeddings WHERE kind = 'probe' AND item_id = $1`,
      [ids[0]],
    );
    expect(probe.n).toBe(1);
    await ds.query(`DELETE FROM embeddings WHERE kind = 'probe' AND item_id = $1`, [ids[0]]);
    const ctx = await context('What are my interests?');
    expect(ctx.sections.map((s) => s.name)).not.toContain('PROFILE');
  });

  it('after revoking, what is stored again stays unused until consent is given again', async () => {
    expect((await update({ interests: [MARK.interest] })).errors).toBeUndefined();
    expect(await vectors(await userId('profile-owner'))).toBe(0);
    expect((await recall('what are my interests')).map((r) => r.sourceType)).not.toContain(
      'PROFILE',
    );
    await consent(true);
    expect(await vectors(await userId('profile-owner'))).toBe(1);
    expect((await recall('what are my interests')).map((r) => r.id)).toContain('profile:interests');
  });

  it('leaves out whole an entry too long for the section, keeping the rest', async () => {
    const long = 'She asks about the harbour and the boats and the nets every time. '.repeat(40);
    expect((await update({ notes: long, preferredName: MARK.name })).errors).toBeUndefined();
    const ctx = await context('Tell me about the harbour');
    const section = ctx.sections.find((s) => s.name === 'PROFILE')!;
    expect(section.items.map((i) => i.sourceId)).toEqual(
      expect.arrayContaining(['preferredName', 'interests']),
    );
    expect(section.items.map((i) => i.sourceId)).not.toContain('notes');
    expect(section.tokens).toBeLessThanOrEqual(150);
  });

  it('leaving a legacy deletes the relationship to it, with its vector', async () => {
    const memberId = await userId('profile-member');
    await consent(true, member);
    const set = await update(
      { relationships: [{ legacyId, relationship: 'his chess partner' }] },
      member,
    );
    expect(set.errors).toBeUndefined();
    expect(await vectors(memberId)).toBe(1);
    await ok('mutation($l: ID!) { leaveLegacy(legacyId: $l) }', { l: legacyId }, member);
    const [left] = await ds.query<{ entries: number }[]>(
      `SELECT count(*)::int AS entries FROM profile_entries WHERE user_id = $1`,
      [memberId],
    );
    expect(left.entries).toBe(0);
    expect(await vectors(memberId)).toBe(0);
    expect((await profile(member)).relationships).toEqual([]);
  });
});
