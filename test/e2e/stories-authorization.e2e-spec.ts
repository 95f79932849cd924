import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * Stories follow the facts' rules: a private story is its author's alone (NOT_FOUND for anyone
 * else, an admin included); a shared one every member reads, only its author edits or shares,
 * and owners and admins may take it back to private or delete it. Every operation, on GraphQL
 * and on the file routes, for every kind of caller; refused calls change nothing.
 */
type Caller = 'anonymous' | 'outsider' | 'member' | 'admin';

interface Fixture {
  legacyId: string;
  privateId: string;
  sharedId: string;
}

interface Row {
  authorizes: string;
  caller: Caller;
  code: 'UNAUTHENTICATED' | 'NOT_FOUND' | 'FORBIDDEN' | 'OK';
  op: (f: Fixture) => { query: string; variables?: Record<string, unknown> };
  /** Allowed and destructive: runs on stories of its own. */
  fresh?: boolean;
}

const SECRET = 'quince marmalade';

const LIST = (f: Fixture) => ({
  query: 'query($l: ID!) { stories(legacyId: $l) { nodes { id title visibility } } }',
  variables: { l: f.legacyId },
});
const ONE = (id: string) => ({
  query: 'query($id: ID!) { story(id: $id) { id title pages { text } } }',
  variables: { id },
});
const ADD = (f: Fixture) => ({
  query: `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "Mine", content: "My own memory of the pier." }) { id } }`,
  variables: { l: f.legacyId },
});
const UPDATE = (id: string) => ({
  query: 'mutation($id: ID!) { updateStory(input: { id: $id, title: "Renamed" }) { id title } }',
  variables: { id },
});
const VISIBILITY = (id: string, visibility: string) => ({
  query: `mutation($id: ID!) { setStoryVisibility(id: $id, visibility: ${visibility}) { id visibility } }`,
  variables: { id },
});
const EXTRACT = (id: string) => ({
  query: 'mutation($id: ID!) { extractStory(id: $id) { factsFound } }',
  variables: { id },
});
const DELETE = (id: string) => ({
  query: 'mutation($id: ID!) { deleteStory(id: $id) }',
  variables: { id },
});

const LEFT_BEHIND = () => ({
  query: '{ leftBehindStories(first: 50) { nodes { id title } } }',
  variables: {},
});

const table: Row[] = [
  { authorizes: 'stories', caller: 'anonymous', code: 'UNAUTHENTICATED', op: LIST },
  { authorizes: 'stories', caller: 'outsider', code: 'NOT_FOUND', op: LIST },
  { authorizes: 'stories', caller: 'member', code: 'OK', op: LIST },
  { authorizes: 'stories', caller: 'admin', code: 'OK', op: LIST },
  {
    authorizes: 'leftBehindStories',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: LEFT_BEHIND,
  },
  { authorizes: 'leftBehindStories', caller: 'member', code: 'OK', op: LEFT_BEHIND },
  { authorizes: 'leftBehindStories', caller: 'admin', code: 'OK', op: LEFT_BEHIND },
  { authorizes: 'story', caller: 'anonymous', code: 'UNAUTHENTICATED', op: (f) => ONE(f.sharedId) },
  { authorizes: 'story', caller: 'outsider', code: 'NOT_FOUND', op: (f) => ONE(f.sharedId) },
  { authorizes: 'story', caller: 'member', code: 'NOT_FOUND', op: (f) => ONE(f.privateId) },
  { authorizes: 'story', caller: 'admin', code: 'NOT_FOUND', op: (f) => ONE(f.privateId) },
  { authorizes: 'story', caller: 'member', code: 'OK', op: (f) => ONE(f.sharedId) },
  { authorizes: 'addStory', caller: 'anonymous', code: 'UNAUTHENTICATED', op: ADD },
  { authorizes: 'addStory', caller: 'outsider', code: 'NOT_FOUND', op: ADD },
  { authorizes: 'addStory', caller: 'member', code: 'OK', op: ADD },
  {
    authorizes: 'updateStory',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => UPDATE(f.sharedId),
  },
  {
    authorizes: 'updateStory',
    caller: 'member',
    code: 'NOT_FOUND',
    op: (f) => UPDATE(f.privateId),
  },
  { authorizes: 'updateStory', caller: 'member', code: 'FORBIDDEN', op: (f) => UPDATE(f.sharedId) },
  { authorizes: 'updateStory', caller: 'admin', code: 'FORBIDDEN', op: (f) => UPDATE(f.sharedId) },
  {
    authorizes: 'setStoryVisibility',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => VISIBILITY(f.sharedId, 'PRIVATE'),
  },
  {
    authorizes: 'setStoryVisibility',
    caller: 'outsider',
    code: 'NOT_FOUND',
    op: (f) => VISIBILITY(f.sharedId, 'PRIVATE'),
  },
  {
    authorizes: 'setStoryVisibility',
    caller: 'admin',
    code: 'NOT_FOUND',
    op: (f) => VISIBILITY(f.privateId, 'SHARED'),
  },
  {
    authorizes: 'setStoryVisibility',
    caller: 'member',
    code: 'FORBIDDEN',
    op: (f) => VISIBILITY(f.sharedId, 'PRIVATE'),
  },
  // Moderation: an admin takes a shared story back to private.
  {
    authorizes: 'setStoryVisibility',
    caller: 'admin',
    code: 'OK',
    op: (f) => VISIBILITY(f.sharedId, 'PRIVATE'),
    fresh: true,
  },
  {
    authorizes: 'deleteStory',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => DELETE(f.sharedId),
  },
  {
    authorizes: 'deleteStory',
    caller: 'outsider',
    code: 'NOT_FOUND',
    op: (f) => DELETE(f.sharedId),
  },
  { authorizes: 'deleteStory', caller: 'admin', code: 'NOT_FOUND', op: (f) => DELETE(f.privateId) },
  { authorizes: 'deleteStory', caller: 'member', code: 'FORBIDDEN', op: (f) => DELETE(f.sharedId) },
  {
    authorizes: 'deleteStory',
    caller: 'admin',
    code: 'OK',
    op: (f) => DELETE(f.sharedId),
    fresh: true,
  },
  {
    authorizes: 'extractStory',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => EXTRACT(f.sharedId),
  },
  {
    authorizes: 'extractStory',
    caller: 'outsider',
    code: 'NOT_FOUND',
    op: (f) => EXTRACT(f.sharedId),
  },
  {
    authorizes: 'extractStory',
    caller: 'member',
    code: 'NOT_FOUND',
    op: (f) => EXTRACT(f.privateId),
  },
  {
    authorizes: 'extractStory',
    caller: 'member',
    code: 'FORBIDDEN',
    op: (f) => EXTRACT(f.sharedId),
  },
  {
    authorizes: 'extractStory',
    caller: 'admin',
    code: 'FORBIDDEN',
    op: (f) => EXTRACT(f.sharedId),
  },
];

describe('stories authorization', () => {
  let t: TestApp;
  let ds: DataSource;
  let base: string;
  const users = {} as Record<'author' | 'member' | 'admin' | 'outsider', TestUser>;
  let shared: Fixture;

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const callerOf = (c: Caller) => (c === 'anonymous' ? null : users[c]);
  const storyRows = (f: Fixture) =>
    ds.query(
      `SELECT id, title, visibility, updated_at FROM stories WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [[f.privateId, f.sharedId]],
    );

  async function addStory(legacyId: string, title: string, visibility: string): Promise<string> {
    const { addStory } = await ok<{ addStory: { id: string } }>(
      `mutation($l: ID!, $t: String!) { addStory(input: { legacyId: $l, title: $t, visibility: ${visibility},
         content: "Her ${SECRET} recipe, written on the back of a tram ticket." }) { id } }`,
      { l: legacyId, t: title },
      users.author,
    );
    return addStory.id;
  }

  async function fixture(legacyId: string): Promise<Fixture> {
    return {
      legacyId,
      privateId: await addStory(legacyId, `Private ${SECRET}`, 'PRIVATE'),
      sharedId: await addStory(legacyId, 'Shared recipe', 'SHARED'),
    };
  }

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    base = t.url.replace(/\/graphql$/, '');
    for (const who of ['author', 'member', 'admin', 'outsider'] as const) {
      users[who] = await t.user(`stories-authz-${who}`, {
        email: `${who}@stories-authz.example.com`,
      });
    }
    const owner = await t.user('stories-authz-owner', { email: 'owner@stories-authz.example.com' });
    const legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Aunt Ida" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    await joinLegacy(t, owner, legacyId, users.author);
    await joinLegacy(t, owner, legacyId, users.member);
    await joinLegacy(t, owner, legacyId, users.admin, 'ADMIN');
    shared = await fixture(legacyId);
    await t.app.get(JobsService).drain();
  });
  afterAll(() => t?.close());

  it.each(table)('$authorizes as $caller: $code', async ({ caller, code, op, fresh }) => {
    const f = fresh ? await fixture(shared.legacyId) : shared;
    const before = await storyRows(f);
    const { query, variables } = op(f);
    const res: GqlResponse = await t.gql(query, variables, callerOf(caller));
    if (code === 'OK') {
      expect(res.errors).toBeUndefined();
    } else {
      expect(res.errors![0].extensions).toMatchObject({ code });
      expect(res.data ?? null).toBeNull();
    }
    // Nobody but the author ever reads the private story.
    expect(JSON.stringify(res)).not.toContain(f.privateId);
    expect(JSON.stringify(res)).not.toContain(`Private ${SECRET}`);
    if (!fresh) expect(await storyRows(f)).toEqual(before);
  });

  it('answers for a private story exactly as for an unknown one', async () => {
    const hidden = await t.gql(
      ONE(shared.privateId).query,
      ONE(shared.privateId).variables,
      users.admin,
    );
    const unknown = await t.gql(
      ONE(shared.privateId).query,
      { id: '00000000-0000-4000-8000-000000000000' },
      users.admin,
    );
    expect(hidden).toEqual(unknown);
  });

  it('guards the file routes the same way', async () => {
    const get = (id: string, as: TestUser | null) =>
      fetch(`${base}/stories/${id}/file`, {
        headers: as ? { authorization: `Bearer ${as.token}` } : {},
      });
    expect((await get(shared.sharedId, null)).status).toBe(401);
    expect((await get(shared.sharedId, users.outsider)).status).toBe(404);
    expect((await get(shared.privateId, users.member)).status).toBe(404);
    expect((await get(shared.privateId, users.admin)).status).toBe(404);
    expect((await get(shared.sharedId, users.member)).status).toBe(200);
    const mine = await get(shared.privateId, users.author);
    expect(mine.status).toBe(200);
    expect(await mine.text()).toContain(SECRET);
  });

  const CHANGED =
    'subscription($l: ID!) { storyChanged(legacyId: $l) { change storyId story { title } } }';

  it.each([
    { authorizes: 'storyChanged', caller: 'anonymous' as Caller, code: 'UNAUTHENTICATED' },
    { authorizes: 'storyChanged', caller: 'outsider' as Caller, code: 'NOT_FOUND' },
  ])('$authorizes as $caller: $code', async ({ caller, code }) => {
    const refused = subscribe(t.ws(callerOf(caller)), CHANGED, { l: shared.legacyId });
    await refused.waitFor(1);
    expect(refused.events[0].errors![0].extensions).toMatchObject({ code });
  });

  it('storyChanged as member: OK, with nothing of a private story, and REMOVED when one is unshared', async () => {
    const events = subscribe<{ storyChanged: { change: string; storyId: string } }>(
      t.ws(users.member),
      CHANGED,
      { l: shared.legacyId },
    );
    await events.ready;
    const secretId = await addStory(shared.legacyId, `Private ${SECRET} two`, 'PRIVATE');
    await ok(
      'mutation($id: ID!) { updateStory(input: { id: $id, title: "Still private" }) { id } }',
      { id: secretId },
      users.author,
    );
    const sharedId = await addStory(shared.legacyId, 'Shared two', 'SHARED');
    await ok(
      'mutation($id: ID!) { setStoryVisibility(id: $id, visibility: PRIVATE) { id } }',
      { id: sharedId },
      users.author,
    );
    await events.waitFor(2);
    await new Promise((r) => setTimeout(r, 150));
    expect(events.events.map((e) => e.data!.storyChanged)).toEqual([
      { change: 'CREATED', storyId: sharedId, story: { title: 'Shared two' } },
      { change: 'REMOVED', storyId: sharedId, story: null },
    ]);
    expect(JSON.stringify(events.events)).not.toContain(secretId);
  });
});
