import { DataSource } from 'typeorm';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import {
  addMember,
  createLegacy,
  exchange,
  ok,
  rememberThis,
  signIn,
  startConversation,
} from '../integration/memories-fixtures.js';
import { JobsService } from '../../src/jobs/jobs.service.js';

/**
 * Memories belong to one user. For every memories operation: anonymous callers are refused,
 * another user (here a member of the same legacy, the closest outsider there is) gets NOT_FOUND
 * for the owner's memory ids and otherwise only ever sees and changes their own memories.
 */
type Caller = 'anonymous' | 'other user';

interface Fixture {
  legacyId: string;
  privateLegacyId: string;
  conversationId: string;
  sourceMessageId: string;
  activeId: string;
  forgottenId: string;
  exportJson: string;
}

interface Row {
  authorizes: string;
  caller: Caller;
  code: 'UNAUTHENTICATED' | 'NOT_FOUND' | 'OK';
  op: (f: Fixture) => { query: string; variables?: Record<string, unknown> };
}

const table: Row[] = [
  { authorizes: 'memories', caller: 'anonymous', code: 'UNAUTHENTICATED', op: () => LIST },
  { authorizes: 'memories', caller: 'other user', code: 'OK', op: () => LIST },
  {
    authorizes: 'memory',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => one(f.activeId),
  },
  { authorizes: 'memory', caller: 'other user', code: 'NOT_FOUND', op: (f) => one(f.activeId) },
  { authorizes: 'memory', caller: 'other user', code: 'NOT_FOUND', op: (f) => one(f.forgottenId) },
  { authorizes: 'exportMemories', caller: 'anonymous', code: 'UNAUTHENTICATED', op: () => EXPORT },
  { authorizes: 'exportMemories', caller: 'other user', code: 'OK', op: () => EXPORT },
  { authorizes: 'memoryStats', caller: 'anonymous', code: 'UNAUTHENTICATED', op: () => STATS },
  { authorizes: 'memoryStats', caller: 'other user', code: 'OK', op: () => STATS },
  {
    authorizes: 'rememberThis',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: () => remember(),
  },
  {
    authorizes: 'rememberThis',
    caller: 'other user',
    code: 'NOT_FOUND',
    op: (f) => remember(f.privateLegacyId),
  },
  {
    authorizes: 'rememberThis',
    caller: 'other user',
    code: 'OK',
    op: (f) => remember(f.legacyId),
  },
  {
    authorizes: 'forgetMemory',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => byId('forgetMemory', f.activeId),
  },
  {
    authorizes: 'forgetMemory',
    caller: 'other user',
    code: 'NOT_FOUND',
    op: (f) => byId('forgetMemory', f.activeId),
  },
  {
    authorizes: 'restoreMemory',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => byId('restoreMemory', f.forgottenId),
  },
  {
    authorizes: 'restoreMemory',
    caller: 'other user',
    code: 'NOT_FOUND',
    op: (f) => byId('restoreMemory', f.forgottenId),
  },
  {
    authorizes: 'forgetMemories',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => forgetMany({ conversationId: f.conversationId }),
  },
  {
    authorizes: 'forgetMemories',
    caller: 'other user',
    code: 'OK',
    op: (f) => forgetMany({ conversationId: f.conversationId }),
  },
  {
    authorizes: 'forgetMemories',
    caller: 'other user',
    code: 'OK',
    op: (f) => forgetMany({ sourceMessageId: f.sourceMessageId }),
  },
  { authorizes: 'clearAllMemories', caller: 'anonymous', code: 'UNAUTHENTICATED', op: () => CLEAR },
  { authorizes: 'clearAllMemories', caller: 'other user', code: 'OK', op: () => CLEAR },
  {
    authorizes: 'importMemories',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => importing(f.exportJson),
  },
  {
    authorizes: 'importMemories',
    caller: 'other user',
    code: 'OK',
    op: (f) => importing(f.exportJson),
  },
];

/** The subscription: the owner's events reach the owner only. */
const subscriptions: { authorizes: 'memoryChanged'; caller: Caller; code: string }[] = [
  { authorizes: 'memoryChanged', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'memoryChanged', caller: 'other user', code: 'OK' },
];

const LIST = { query: '{ memories(first: 100) { nodes { id content } } }' };
const EXPORT = { query: '{ exportMemories(format: JSON) { count data } }' };
const STATS = { query: '{ memoryStats { total turnsExamined replies } }' };
const CLEAR = { query: 'mutation { clearAllMemories(confirm: "DELETE ALL MY MEMORIES") }' };
const one = (id: string) => ({
  query: 'query($id: ID!) { memory(id: $id) { id content } }',
  variables: { id },
});
const byId = (field: string, id: string) => ({
  query: `mutation($id: ID!) { ${field}(id: $id) { id content status } }`,
  variables: { id },
});
const remember = (legacyId?: string) => ({
  query: `mutation($input: RememberThisInput!) { rememberThis(input: $input) { memory { id } } }`,
  variables: { input: { content: 'I like writing things down.', legacyId } },
});
const forgetMany = (filter: Record<string, string>) => ({
  query: `mutation($filter: ForgetMemoriesFilter!) {
    forgetMemories(filter: $filter) { forgottenCount memoryIds } }`,
  variables: { filter },
});
const importing = (json: string) => ({
  query: 'mutation($json: String!) { importMemories(json: $json) { importedCount memoryIds } }',
  variables: { json },
});

const SECRET = 'secret garden';

describe('memories authorization', () => {
  let t: TestApp;
  let ds: DataSource;
  let owner: TestUser & { id: string };
  let other: TestUser & { id: string };
  let f: Fixture;

  const ownerRows = () =>
    ds.query(
      `SELECT id, status, reference_count, content, updated_at FROM memories
        WHERE user_id = $1 ORDER BY id`,
      [owner.id],
    );

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    owner = await signIn(t, 'mem-authz-owner');
    other = await signIn(t, 'mem-authz-other');
    const legacyId = await createLegacy(t, owner);
    const privateLegacyId = await createLegacy(t, owner, 'Grandpa');
    await addMember(t, owner, legacyId, other);
    const conversationId = await startConversation(t, owner, legacyId, true);
    const ex = await exchange(t, owner, conversationId, `My favourite place is the ${SECRET}.`);
    await t.app.get(JobsService).drain();
    const [extracted] = await ds.query(
      `SELECT id FROM memories WHERE user_id = $1 AND source_message_id = $2`,
      [owner.id, ex.userMessageId],
    );
    const forgotten = await rememberThis(t, owner, `I buried a key in the ${SECRET}.`);
    ok(
      await t.gql(
        'mutation($id: ID!) { forgetMemory(id: $id) { id } }',
        { id: forgotten.memory.id },
        owner,
      ),
    );
    const exported = ok(
      await t.gql<{ exportMemories: { data: string } }>(
        '{ exportMemories(format: JSON) { data } }',
        {},
        owner,
      ),
    );
    f = {
      legacyId,
      privateLegacyId,
      conversationId,
      sourceMessageId: ex.userMessageId,
      activeId: extracted.id,
      forgottenId: forgotten.memory.id,
      exportJson: exported.exportMemories.data,
    };
  });
  afterAll(() => t.close());

  it.each(table)('$authorizes as $caller: $code', async ({ caller, code, op }) => {
    const before = await ownerRows();
    const { query, variables } = op(f);
    const res: GqlResponse = await t.gql(query, variables, caller === 'anonymous' ? null : other);
    if (code === 'OK') {
      expect(res.errors).toBeUndefined();
    } else {
      expect(res.errors![0].extensions).toMatchObject({ code });
      expect(res.data ?? null).toBeNull();
    }
    // Nothing of the owner's ever comes back, and nothing of theirs changes.
    expect(JSON.stringify(res)).not.toContain(SECRET);
    expect(JSON.stringify(res)).not.toContain(f.activeId);
    expect(await ownerRows()).toEqual(before);
  });

  it("answers another user's memory id exactly like an unknown one", async () => {
    const theirs = await t.gql(one(f.activeId).query, { id: f.activeId }, other);
    const unknown = await t.gql(
      one(f.activeId).query,
      { id: '00000000-0000-4000-8000-000000000000' },
      other,
    );
    expect(theirs).toEqual(unknown);
  });

  it("keeps an import of someone's export in the importer's own account", async () => {
    const mine = await ds.query(
      `SELECT content, user_id, source_reference FROM memories WHERE user_id = $1`,
      [other.id],
    );
    // The rows came from the importMemories row above: copies, owned by the importer.
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((r: { user_id: string }) => r.user_id === other.id)).toBe(true);
    expect(mine.map((r: { source_reference: string }) => r.source_reference)).toContain(f.activeId);
  });

  it.each(subscriptions)('$authorizes as $caller: $code', async ({ caller, code }) => {
    const CHANGED = 'subscription { memoryChanged { action memoryIds memory { content } } }';
    if (code === 'UNAUTHENTICATED') {
      const refused = subscribe(t.ws(caller === 'anonymous' ? null : other), CHANGED);
      await refused.waitFor(1);
      expect(refused.events[0].errors![0].extensions).toMatchObject({ code });
      expect(refused.events[0].data ?? null).toBeNull();
      return;
    }
    const others = subscribe(t.ws(other), CHANGED);
    const owners = subscribe<{ memoryChanged: { action: string; memoryIds: string[] } }>(
      t.ws(owner),
      CHANGED,
    );
    await Promise.all([others.ready, owners.ready]);
    const saved = await rememberThis(t, owner, `The ${SECRET} gate is blue.`);
    ok(
      await t.gql(
        'mutation($id: ID!) { forgetMemory(id: $id) { id } }',
        { id: saved.memory.id },
        owner,
      ),
    );
    await owners.waitFor(2);
    expect(owners.events.map((e) => e.data!.memoryChanged.action)).toEqual(['SAVED', 'FORGOTTEN']);
    await new Promise((r) => setTimeout(r, 100));
    expect(others.events).toEqual([]);
  });
});
