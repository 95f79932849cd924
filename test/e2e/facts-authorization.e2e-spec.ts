import { DataSource } from 'typeorm';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import { joinLegacy } from '../support/membership.js';

type Caller = 'anonymous' | 'outsider' | 'family member' | 'legacy owner';

interface Fixture {
  legacyId: string;
  /** The author's private fact; its content holds SECRET. */
  privateId: string;
  /** The author's shared fact. */
  sharedId: string;
  /** The author's private fact, deleted. */
  deletedId: string;
  /** The author's conversation; its turns hold SECRET. */
  conversationId: string;
}

const SECRET = 'Marigold';

/**
 * Who may call the facts and summaries operations. A member's private facts are theirs alone:
 * other members, owners included, get NOT_FOUND for them (as for a fact that does not exist);
 * a shared fact is visible to the family, but only its author changes it (FORBIDDEN), apart
 * from the moderation that owners and admins may do (see facts.e2e-spec.ts). Every refused row
 * checks that nothing leaked into the response and nothing changed in the database.
 */
const table: {
  authorizes:
    | 'facts'
    | 'facts asFamily'
    | 'fact'
    | 'factHistory'
    | 'addFact'
    | 'updateFact'
    | 'setFactVisibility'
    | 'deleteFact'
    | 'restoreFact'
    | 'factChanged'
    | 'summarizeNow';
  caller: Caller;
  target?: 'private' | 'shared';
  code: 'OK' | 'UNAUTHENTICATED' | 'NOT_FOUND' | 'FORBIDDEN';
}[] = [
  { authorizes: 'facts', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'facts', caller: 'outsider', code: 'NOT_FOUND' },
  { authorizes: 'facts', caller: 'family member', code: 'OK' },
  { authorizes: 'facts', caller: 'legacy owner', code: 'OK' },
  { authorizes: 'facts asFamily', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'facts asFamily', caller: 'outsider', code: 'NOT_FOUND' },
  { authorizes: 'facts asFamily', caller: 'family member', code: 'OK' },
  { authorizes: 'facts asFamily', caller: 'legacy owner', code: 'OK' },
  { authorizes: 'fact', caller: 'anonymous', target: 'shared', code: 'UNAUTHENTICATED' },
  { authorizes: 'fact', caller: 'outsider', target: 'shared', code: 'NOT_FOUND' },
  { authorizes: 'fact', caller: 'family member', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'fact', caller: 'legacy owner', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'fact', caller: 'family member', target: 'shared', code: 'OK' },
  { authorizes: 'fact', caller: 'legacy owner', target: 'shared', code: 'OK' },
  { authorizes: 'factHistory', caller: 'anonymous', target: 'private', code: 'UNAUTHENTICATED' },
  { authorizes: 'factHistory', caller: 'outsider', target: 'shared', code: 'NOT_FOUND' },
  { authorizes: 'factHistory', caller: 'family member', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'factHistory', caller: 'legacy owner', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'factHistory', caller: 'family member', target: 'shared', code: 'OK' },
  { authorizes: 'addFact', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'addFact', caller: 'outsider', code: 'NOT_FOUND' },
  { authorizes: 'updateFact', caller: 'anonymous', target: 'private', code: 'UNAUTHENTICATED' },
  { authorizes: 'updateFact', caller: 'outsider', target: 'shared', code: 'NOT_FOUND' },
  { authorizes: 'updateFact', caller: 'family member', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'updateFact', caller: 'legacy owner', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'updateFact', caller: 'family member', target: 'shared', code: 'FORBIDDEN' },
  { authorizes: 'updateFact', caller: 'legacy owner', target: 'shared', code: 'FORBIDDEN' },
  {
    authorizes: 'setFactVisibility',
    caller: 'anonymous',
    target: 'private',
    code: 'UNAUTHENTICATED',
  },
  { authorizes: 'setFactVisibility', caller: 'outsider', target: 'shared', code: 'NOT_FOUND' },
  {
    authorizes: 'setFactVisibility',
    caller: 'family member',
    target: 'private',
    code: 'NOT_FOUND',
  },
  { authorizes: 'setFactVisibility', caller: 'legacy owner', target: 'private', code: 'NOT_FOUND' },
  {
    authorizes: 'setFactVisibility',
    caller: 'family member',
    target: 'shared',
    code: 'FORBIDDEN',
  },
  { authorizes: 'deleteFact', caller: 'anonymous', target: 'private', code: 'UNAUTHENTICATED' },
  { authorizes: 'deleteFact', caller: 'outsider', target: 'shared', code: 'NOT_FOUND' },
  { authorizes: 'deleteFact', caller: 'family member', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'deleteFact', caller: 'legacy owner', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'deleteFact', caller: 'family member', target: 'shared', code: 'FORBIDDEN' },
  { authorizes: 'restoreFact', caller: 'anonymous', target: 'private', code: 'UNAUTHENTICATED' },
  { authorizes: 'restoreFact', caller: 'outsider', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'restoreFact', caller: 'family member', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'restoreFact', caller: 'legacy owner', target: 'private', code: 'NOT_FOUND' },
  { authorizes: 'factChanged', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'factChanged', caller: 'outsider', code: 'NOT_FOUND' },
  { authorizes: 'factChanged', caller: 'family member', code: 'OK' },
  { authorizes: 'summarizeNow', caller: 'anonymous', code: 'UNAUTHENTICATED' },
  { authorizes: 'summarizeNow', caller: 'outsider', code: 'NOT_FOUND' },
  { authorizes: 'summarizeNow', caller: 'family member', code: 'NOT_FOUND' },
  { authorizes: 'summarizeNow', caller: 'legacy owner', code: 'NOT_FOUND' },
];

const FIELDS = 'id content visibility status';

describe('facts and summaries authorization', () => {
  let t: TestApp;
  let db: DataSource;
  let author: TestUser;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let f: Fixture;

  async function ok<T>(query: string, variables: Record<string, unknown>, as: TestUser) {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data as T;
  }

  const addFact = async (content: string, visibility: string) =>
    (
      await ok<{ addFact: { id: string } }>(
        `mutation($input: AddFactInput!) { addFact(input: $input) { id } }`,
        { input: { legacyId: f.legacyId, content, category: 'OTHER', visibility } },
        author,
      )
    ).addFact.id;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    db = t.app.get(DataSource);
    owner = await t.user('fauthz-owner', { email: 'owner@example.com' });
    author = await t.user('fauthz-author', { email: 'author@example.com' });
    member = await t.user('fauthz-member', { email: 'member@example.com' });
    outsider = await t.user('fauthz-outsider', { email: 'outsider@example.com' });
    for (const u of [author, member, outsider]) await ok('{ me { id } }', {}, u);
    f = {} as Fixture;
    f.legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Joe" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    for (const invitee of [author, member]) await joinLegacy(t, owner, f.legacyId, invitee);
    f.privateId = await addFact(`Joe buried a tin box under the ${SECRET} bush.`, 'PRIVATE');
    f.sharedId = await addFact('Joe loved the county fair.', 'SHARED');
    f.deletedId = await addFact(`Joe once sold the ${SECRET} farm.`, 'PRIVATE');
    await ok('mutation($id: ID!) { deleteFact(id: $id) { id } }', { id: f.deletedId }, author);
    f.conversationId = (
      await ok<{ importConversation: { conversation: { id: string } } }>(
        `mutation($input: ImportConversationInput!) {
           importConversation(input: $input) { conversation { id } } }`,
        {
          input: {
            legacyId: f.legacyId,
            messages: [
              {
                role: 'USER',
                content: `Joe planted ${SECRET}s every spring.`,
                occurredAt: '2024-04-01T10:00:00Z',
              },
            ],
          },
        },
        author,
      )
    ).importConversation.conversation.id;
  });
  afterAll(() => t.close());

  const as = (caller: Caller) =>
    caller === 'anonymous'
      ? null
      : caller === 'outsider'
        ? outsider
        : caller === 'family member'
          ? member
          : owner;

  const targetId = (target: 'private' | 'shared' | undefined, op: string) =>
    op === 'restoreFact' ? f.deletedId : target === 'shared' ? f.sharedId : f.privateId;

  /** Every fact and chunk, to compare before and after a refused call. */
  const state = () =>
    db.query(
      `SELECT (SELECT json_agg(json_build_object('id', id, 'content', content, 'category', category,
                'visibility', visibility, 'status', status, 'mentions', mention_count) ORDER BY id)
                 FROM facts) AS facts,
              (SELECT count(*) FROM conversation_chunks)::int AS chunks,
              (SELECT count(*) FROM fact_history)::int AS history`,
    );

  function call(op: string, caller: Caller, id: string): Promise<GqlResponse> {
    const who = as(caller);
    switch (op) {
      case 'facts':
        return t.gql(
          `query($id: ID!) { facts(legacyId: $id, first: 100) { nodes { ${FIELDS} } } }`,
          { id: f.legacyId },
          who,
        );
      case 'facts asFamily':
        return t.gql(
          `query($id: ID!) { facts(legacyId: $id, filter: { asFamily: true }, first: 100) { nodes { ${FIELDS} } } }`,
          { id: f.legacyId },
          who,
        );
      case 'fact':
        return t.gql(`query($id: ID!) { fact(id: $id) { ${FIELDS} } }`, { id }, who);
      case 'factHistory':
        return t.gql(`query($id: ID!) { factHistory(id: $id) { content } }`, { id }, who);
      case 'addFact':
        return t.gql(
          `mutation($input: AddFactInput!) { addFact(input: $input) { ${FIELDS} } }`,
          { input: { legacyId: f.legacyId, content: 'Joe had a boat.', category: 'OTHER' } },
          who,
        );
      case 'updateFact':
        return t.gql(
          `mutation($input: UpdateFactInput!) { updateFact(input: $input) { ${FIELDS} } }`,
          { input: { id, content: 'Rewritten.' } },
          who,
        );
      case 'setFactVisibility':
        return t.gql(
          `mutation($id: ID!, $v: FactVisibility!) { setFactVisibility(id: $id, visibility: $v) { ${FIELDS} } }`,
          { id, v: id === f.sharedId ? 'PRIVATE' : 'SHARED' },
          who,
        );
      case 'deleteFact':
        return t.gql(`mutation($id: ID!) { deleteFact(id: $id) { ${FIELDS} } }`, { id }, who);
      case 'restoreFact':
        return t.gql(`mutation($id: ID!) { restoreFact(id: $id) { ${FIELDS} } }`, { id }, who);
      case 'summarizeNow':
        return t.gql(
          `mutation($id: ID!) { summarizeNow(conversationId: $id) { chunks { content } } }`,
          { id: f.conversationId },
          who,
        );
      default:
        throw new Error(op);
    }
  }

  it.each(table.filter((r) => r.authorizes !== 'factChanged'))(
    '$authorizes ($target) as $caller: $code',
    async ({ authorizes, caller, target, code }) => {
      const before = await state();
      const res = await call(authorizes, caller, targetId(target, authorizes));
      // The author's private text never reaches anyone else, allowed call or not.
      expect(JSON.stringify(res)).not.toContain(SECRET);
      if (code === 'OK') {
        expect(res.errors).toBeUndefined();
        expect(await state()).toEqual(before);
        return;
      }
      expect(res.errors).toHaveLength(1);
      expect(res.errors![0].extensions).toMatchObject({ code });
      expect(res.data ?? null).toBeNull();
      expect(await state()).toEqual(before);
      if (code === 'NOT_FOUND' && !authorizes.startsWith('facts') && authorizes !== 'addFact') {
        // Indistinguishable from an id that does not exist.
        const missing = await call(authorizes, caller, '00000000-0000-4000-8000-000000000000');
        if (authorizes !== 'summarizeNow') expect(missing.errors![0]).toEqual(res.errors![0]);
      }
    },
  );

  it('lists for a family member only the shared facts and their own', async () => {
    const res = await call('facts', 'family member', '');
    const nodes = (res.data as { facts: { nodes: { id: string }[] } }).facts.nodes;
    expect(nodes.map((n) => n.id)).toEqual([f.sharedId]);
  });

  let run = 0;
  it.each(table.filter((r) => r.authorizes === 'factChanged'))(
    '$authorizes as $caller: $code, and no private fact is delivered',
    async ({ caller, code }) => {
      run++;
      const sub = subscribe<{ factChanged: { change: string; fact: { content: string } | null } }>(
        t.ws(as(caller)),
        'subscription($id: ID!) { factChanged(legacyId: $id) { change fact { content } } }',
        { id: f.legacyId },
      );
      await sub.ready;
      await ok(
        `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
        { input: { id: f.privateId, content: `Joe buried ${run} tins under the ${SECRET} tree.` } },
        author,
      );
      await ok(
        `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
        { input: { id: f.sharedId, content: `Joe went to the county fair ${run} times.` } },
        author,
      );
      const events = await sub.waitFor(1);
      await new Promise((r) => setTimeout(r, 100));
      expect(JSON.stringify(sub.events)).not.toContain(SECRET);
      if (code === 'OK') {
        expect(sub.events.map((e) => e.data?.factChanged.change)).toEqual(['UPDATED']);
        expect(sub.events[0].data!.factChanged.fact!.content).toMatch(/county fair/);
      } else {
        // A refused subscription reports in a `next` (then `complete`) or an `error`.
        const errors = events[0]?.errors ?? (sub.error as GqlResponse['errors']) ?? [];
        expect(events.every((e) => e.data == null)).toBe(true);
        expect(errors).toHaveLength(1);
        expect(errors[0].extensions).toMatchObject({ code });
      }
      sub.unsubscribe();
    },
  );
});
