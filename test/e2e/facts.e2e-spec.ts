import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import { joinLegacy } from '../support/membership.js';

interface Fact {
  id: string;
  content: string;
  category: string;
  visibility: string;
  status: string;
  authorId: string;
  mentionCount: number;
}

interface Changed {
  factChanged: { change: string; factId: string; actorId: string | null; fact: Fact | null };
}

const FIELDS = 'id content category visibility status authorId mentionCount';
const FACT_CHANGED = `subscription($legacyId: ID!) {
  factChanged(legacyId: $legacyId) { change factId actorId fact { ${FIELDS} } } }`;

/**
 * The family review flow over HTTP and WebSocket: a member's conversation yields facts that
 * only they see; they correct and share them; the family sees shared facts, on the list and
 * live, and stops seeing them (a REMOVED event) when they are unshared, moderated or deleted.
 */
describe('facts: family review', () => {
  let t: TestApp;
  let owner: TestUser;
  let anna: TestUser;
  let ben: TestUser;
  let legacyId: string;
  let annaId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.user('review-owner', { email: 'owner@example.com' });
    anna = await t.user('review-anna', { email: 'anna@example.com' });
    ben = await t.user('review-ben', { email: 'ben@example.com' });
    annaId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, anna)).me.id;
    await ok('{ me { id } }', {}, ben);
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Joe" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    for (const invitee of [anna, ben]) await joinLegacy(t, owner, legacyId, invitee);
  });
  afterAll(() => t.close());

  async function ok<T>(query: string, variables: Record<string, unknown>, as: TestUser) {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data as T;
  }

  async function list(as: TestUser, filter: Record<string, unknown> = {}, first = 50) {
    const data = await ok<{ facts: { nodes: Fact[] } }>(
      `query($legacyId: ID!, $filter: FactFilter, $first: Int) {
         facts(legacyId: $legacyId, filter: $filter, first: $first) { nodes { ${FIELDS} } } }`,
      { legacyId, filter, first },
      as,
    );
    return data.facts.nodes;
  }

  const addFact = async (as: TestUser, content: string, category = 'OTHER', visibility?: string) =>
    (
      await ok<{ addFact: Fact }>(
        `mutation($input: AddFactInput!) { addFact(input: $input) { ${FIELDS} } }`,
        { input: { legacyId, content, category, ...(visibility ? { visibility } : {}) } },
        as,
      )
    ).addFact;

  const setVisibility = (as: TestUser, id: string, visibility: string) =>
    t.gql<{ setFactVisibility: Fact }>(
      `mutation($id: ID!, $v: FactVisibility!) { setFactVisibility(id: $id, visibility: $v) { ${FIELDS} } }`,
      { id, v: visibility },
      as,
    );

  const code = (res: GqlResponse) => res.errors?.[0]?.extensions?.code;

  it('turns a conversation into private facts its author reviews, corrects and shares', async () => {
    const conversation = await ok<{ startConversation: { id: string } }>(
      `mutation($input: StartConversationInput!) { startConversation(input: $input) { id } }`,
      { input: { legacyId } },
      anna,
    );
    const conversationId = conversation.startConversation.id;
    for (const content of [
      'Joe worked as a carpenter for thirty years.',
      'Joe loved fishing on the lake.',
    ]) {
      await ok(
        `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`,
        { input: { conversationId, content } },
        anna,
      );
    }
    const summarized = await ok<{
      summarizeNow: {
        deferred: boolean;
        unsummarizedTurns: number;
        chunks: { rangeStart: number; rangeEnd: number }[];
      };
    }>(
      `mutation($id: ID!) { summarizeNow(conversationId: $id) {
         deferred unsummarizedTurns chunks { rangeStart rangeEnd } } }`,
      { id: conversationId },
      anna,
    );
    expect(summarized.summarizeNow).toEqual({
      deferred: false,
      unsummarizedTurns: 0,
      chunks: [{ rangeStart: 0, rangeEnd: 3 }],
    });
    const chunks = await ok<{ conversation: { chunks: { content: string; turnCount: number }[] } }>(
      'query($id: ID!) { conversation(id: $id) { chunks { content turnCount } } }',
      { id: conversationId },
      anna,
    );
    expect(chunks.conversation.chunks).toHaveLength(1);

    const mine = await list(anna);
    expect(mine.map((f) => [f.content, f.category, f.visibility]).sort()).toEqual([
      ['Joe loved fishing on the lake.', 'HOBBY', 'PRIVATE'],
      ['Joe worked as a carpenter for thirty years.', 'OCCUPATION', 'PRIVATE'],
    ]);
    expect(await list(ben)).toEqual([]);
    expect(await list(owner)).toEqual([]);

    const carpenter = mine.find((f) => f.category === 'OCCUPATION')!;
    const corrected = await ok<{ updateFact: Fact }>(
      `mutation($input: UpdateFactInput!) { updateFact(input: $input) { ${FIELDS} } }`,
      { input: { id: carpenter.id, content: 'Joe worked as a carpenter for forty years' } },
      anna,
    );
    expect(corrected.updateFact.content).toBe('Joe worked as a carpenter for forty years.');
    await setVisibility(anna, carpenter.id, 'SHARED');
    expect((await list(ben)).map((f) => [f.content, f.authorId])).toEqual([
      ['Joe worked as a carpenter for forty years.', annaId],
    ]);
    const history = await ok<{ factHistory: { action: string; content: string }[] }>(
      'query($id: ID!) { factHistory(id: $id) { action content } }',
      { id: carpenter.id },
      anna,
    );
    expect(history.factHistory.map((h) => h.action)).toEqual([
      'CREATED',
      'UPDATED',
      'VISIBILITY_CHANGED',
    ]);
  });

  it("shows other members only what was said while shared in a fact's history", async () => {
    const fact = await addFact(anna, 'Joe had a heart condition late in life.', 'OTHER');
    await ok(
      `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
      { input: { id: fact.id, content: 'Joe was unwell late in life.' } },
      anna,
    );
    await setVisibility(anna, fact.id, 'SHARED');
    const seen = await ok<{ factHistory: { action: string; content: string }[] }>(
      'query($id: ID!) { factHistory(id: $id) { action content } }',
      { id: fact.id },
      ben,
    );
    expect(seen.factHistory).toEqual([
      { action: 'VISIBILITY_CHANGED', content: 'Joe was unwell late in life.' },
    ]);
    expect(JSON.stringify(seen)).not.toContain('heart');
  });

  it('delivers each subscriber what it may see, and a removal when that ends', async () => {
    const annaSub = subscribe<Changed>(t.ws(anna), FACT_CHANGED, { legacyId });
    const benSub = subscribe<Changed>(t.ws(ben), FACT_CHANGED, { legacyId });
    await Promise.all([annaSub.ready, benSub.ready]);

    const fact = await addFact(anna, 'Joe whistled while he worked.', 'HABIT');
    await ok(
      `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
      { input: { id: fact.id, category: 'PERSONALITY' } },
      anna,
    );
    // Ben saw none of that. Shared, it appears for him.
    await setVisibility(anna, fact.id, 'SHARED');
    await benSub.waitFor(1);
    expect((await list(ben)).map((f) => f.id)).toContain(fact.id);
    await ok(
      `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
      { input: { id: fact.id, content: 'Joe whistled old tunes while he worked.' } },
      anna,
    );
    await setVisibility(anna, fact.id, 'PRIVATE');
    // Unshared: gone from Ben's list and his history view at once.
    expect((await list(ben)).map((f) => f.id)).not.toContain(fact.id);
    expect(
      code(await t.gql('query($id: ID!) { factHistory(id: $id) { id } }', { id: fact.id }, ben)),
    ).toBe('NOT_FOUND');
    // Private again: a change Ben must not see, and nothing he may not see leaks later.
    await ok(
      `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
      { input: { id: fact.id, content: 'Joe whistled, and hummed a secret song.' } },
      anna,
    );
    await annaSub.waitFor(5);
    await benSub.waitFor(3);
    await new Promise((r) => setTimeout(r, 100));

    const view = (s: typeof annaSub) =>
      s.events.map((e) => [e.data!.factChanged.change, e.data!.factChanged.fact?.content ?? null]);
    expect(view(annaSub)).toEqual([
      ['CREATED', 'Joe whistled while he worked.'],
      ['UPDATED', 'Joe whistled while he worked.'],
      ['VISIBILITY_CHANGED', 'Joe whistled while he worked.'],
      ['UPDATED', 'Joe whistled old tunes while he worked.'],
      ['VISIBILITY_CHANGED', 'Joe whistled old tunes while he worked.'],
      ['UPDATED', 'Joe whistled, and hummed a secret song.'],
    ]);
    expect(view(benSub)).toEqual([
      ['VISIBILITY_CHANGED', 'Joe whistled while he worked.'],
      ['UPDATED', 'Joe whistled old tunes while he worked.'],
      ['REMOVED', null],
    ]);
    expect(benSub.events[2].data!.factChanged).toEqual({
      change: 'REMOVED',
      factId: fact.id,
      actorId: null,
      fact: null,
    });
    expect(JSON.stringify(benSub.events)).not.toContain('secret');
    annaSub.unsubscribe();
    benSub.unsubscribe();
  });

  it('lets an owner take a shared fact back to private or delete it, never read private ones', async () => {
    const shared = await addFact(anna, 'Joe sang in the church choir.', 'HOBBY', 'SHARED');
    const hidden = await addFact(anna, 'Joe never forgave his brother.', 'RELATIONSHIP');
    const benSub = subscribe<Changed>(t.ws(ben), FACT_CHANGED, { legacyId });
    await benSub.ready;

    // The owner cannot see, share, delete or read the history of Anna's private fact.
    expect(code(await setVisibility(owner, hidden.id, 'SHARED'))).toBe('NOT_FOUND');
    expect(code(await setVisibility(owner, hidden.id, 'PRIVATE'))).toBe('NOT_FOUND');
    const del = 'mutation($id: ID!) { deleteFact(id: $id) { id status } }';
    expect(code(await t.gql(del, { id: hidden.id }, owner))).toBe('NOT_FOUND');
    expect(
      code(
        await t.gql('query($id: ID!) { factHistory(id: $id) { id } }', { id: hidden.id }, owner),
      ),
    ).toBe('NOT_FOUND');
    expect((await list(owner)).some((f) => f.id === hidden.id)).toBe(false);
    // Nor share what its author shared... on her behalf, nor edit it.
    expect(
      code(
        await t.gql(
          `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`,
          { input: { id: shared.id, content: 'Joe sang badly.' } },
          owner,
        ),
      ),
    ).toBe('FORBIDDEN');

    // Moderation: back to private. Anna still has it; Ben is told to drop it.
    const moderated = await setVisibility(owner, shared.id, 'PRIVATE');
    expect(moderated.data!.setFactVisibility.visibility).toBe('PRIVATE');
    await benSub.waitFor(1);
    expect(benSub.events[0].data!.factChanged).toMatchObject({
      change: 'REMOVED',
      factId: shared.id,
    });
    expect((await list(anna)).find((f) => f.id === shared.id)!.visibility).toBe('PRIVATE');
    expect(code(await setVisibility(owner, shared.id, 'SHARED'))).toBe('NOT_FOUND');

    // Anna shares it again; the owner deletes it (soft), then undoes that.
    await setVisibility(anna, shared.id, 'SHARED');
    const deleted = await ok<{ deleteFact: Fact }>(del, { id: shared.id }, owner);
    expect(deleted.deleteFact.status).toBe('DELETED');
    expect((await list(ben)).some((f) => f.id === shared.id)).toBe(false);
    expect((await list(anna, { status: 'DELETED' })).map((f) => f.id)).toContain(shared.id);
    const restored = await ok<{ restoreFact: Fact }>(
      'mutation($id: ID!) { restoreFact(id: $id) { id status } }',
      { id: shared.id },
      owner,
    );
    expect(restored.restoreFact.status).toBe('ACTIVE');
    await benSub.waitFor(4);
    expect(benSub.events.map((e) => e.data!.factChanged.change)).toEqual([
      'REMOVED',
      'VISIBILITY_CHANGED',
      'REMOVED',
      'RESTORED',
    ]);
    expect(JSON.stringify(benSub.events)).not.toContain('forgave');
    benSub.unsubscribe();
  });

  it('keeps members from changing facts that are not theirs', async () => {
    const shared = await addFact(anna, 'Joe drove a blue Ford truck.', 'OTHER', 'SHARED');
    const hidden = await addFact(anna, 'Joe kept a diary in the attic.', 'HABIT');
    const update = `mutation($input: UpdateFactInput!) { updateFact(input: $input) { id } }`;
    const del = 'mutation($id: ID!) { deleteFact(id: $id) { id } }';
    const restore = 'mutation($id: ID!) { restoreFact(id: $id) { id } }';
    expect(code(await t.gql(update, { input: { id: shared.id, content: 'x' } }, ben))).toBe(
      'FORBIDDEN',
    );
    expect(code(await t.gql(del, { id: shared.id }, ben))).toBe('FORBIDDEN');
    expect(code(await setVisibility(ben, shared.id, 'PRIVATE'))).toBe('FORBIDDEN');
    expect(code(await t.gql(update, { input: { id: hidden.id, content: 'x' } }, ben))).toBe(
      'NOT_FOUND',
    );
    expect(code(await t.gql(del, { id: hidden.id }, ben))).toBe('NOT_FOUND');
    expect(code(await setVisibility(ben, hidden.id, 'SHARED'))).toBe('NOT_FOUND');
    // A fact Anna deleted herself stays hers to restore.
    await ok(del, { id: shared.id }, anna);
    expect(code(await t.gql(restore, { id: shared.id }, ben))).toBe('NOT_FOUND');
    expect(code(await t.gql(restore, { id: shared.id }, owner))).toBe('NOT_FOUND');
    await ok(restore, { id: shared.id }, anna);
    const after = await list(anna);
    expect(after.find((f) => f.id === shared.id)!.content).toBe('Joe drove a blue Ford truck.');
    expect(after.find((f) => f.id === hidden.id)!.content).toBe('Joe kept a diary in the attic.');
  });

  it('filters, searches by keywords and by meaning, and pages', async () => {
    await addFact(ben, 'Joe kept bees behind the house.', 'HOBBY', 'SHARED');
    await addFact(ben, 'Joe was born in Iowa.', 'MILESTONE');
    const benId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, ben)).me.id;

    const hobbies = await list(ben, { category: 'HOBBY' });
    expect(hobbies.every((f) => f.category === 'HOBBY')).toBe(true);
    expect(hobbies.map((f) => f.content)).toEqual(
      expect.arrayContaining(['Joe kept bees behind the house.', 'Joe sang in the church choir.']),
    );
    expect((await list(ben, { authorId: benId })).map((f) => f.content).sort()).toEqual([
      'Joe kept bees behind the house.',
      'Joe was born in Iowa.',
    ]);
    expect((await list(ben, { visibility: 'PRIVATE' })).map((f) => f.content)).toEqual([
      'Joe was born in Iowa.',
    ]);
    // Anna's private facts never show, whatever the filter.
    expect((await list(ben, { authorId: annaId, visibility: 'PRIVATE' })).length).toBe(0);

    const search = async (text: string) =>
      (await list(ben, { search: text })).map((f) => f.content);
    expect(await search('bees')).toEqual(['Joe kept bees behind the house.']);
    expect(await search('carpent')).toEqual(['Joe worked as a carpenter for forty years.']);
    expect((await search('Where was Joe born?'))[0]).toBe('Joe was born in Iowa.');
    expect((await search('Joe was a beekeeper'))[0]).toBe('Joe kept bees behind the house.');
    expect(await search('diary')).toEqual([]);

    // Search results page by relevance, one at a time, to the same list.
    const ranked = await list(ben, { search: 'Joe' });
    expect(ranked.length).toBeGreaterThan(2);
    const paged: string[] = [];
    let after: string | null = null;
    do {
      const page: {
        facts: { nodes: Fact[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
      } = await ok(
        `query($legacyId: ID!, $after: String) {
             facts(legacyId: $legacyId, filter: { search: "Joe" }, first: 1, after: $after) {
               nodes { id } pageInfo { hasNextPage endCursor } } }`,
        { legacyId, after },
        ben,
      );
      paged.push(...page.facts.nodes.map((n) => n.id));
      after = page.facts.pageInfo.hasNextPage ? page.facts.pageInfo.endCursor : null;
    } while (after);
    expect(paged).toEqual(ranked.map((f) => f.id));

    const all = await list(ben);
    const firstPage = await ok<{
      facts: { nodes: Fact[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    }>(
      `query($legacyId: ID!) { facts(legacyId: $legacyId, first: 2) {
         nodes { id } pageInfo { hasNextPage endCursor } } }`,
      { legacyId },
      ben,
    );
    expect(firstPage.facts.pageInfo.hasNextPage).toBe(true);
    const rest = await ok<{ facts: { nodes: Fact[] } }>(
      `query($legacyId: ID!, $after: String) { facts(legacyId: $legacyId, first: 100, after: $after) {
         nodes { id } } }`,
      { legacyId, after: firstPage.facts.pageInfo.endCursor },
      ben,
    );
    expect([...firstPage.facts.nodes, ...rest.facts.nodes].map((f) => f.id)).toEqual(
      all.map((f) => f.id),
    );
  });
});
