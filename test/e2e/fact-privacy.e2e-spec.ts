import { DataSource } from 'typeorm';
import { FactSourceRepository } from '../../src/facts/fact-source.repository.js';
import { FactRepository } from '../../src/facts/fact.repository.js';
import { SummariesService } from '../../src/summaries/summaries.service.js';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * A member's private fact must not show through a shared one (fact-visibility.ts): not in its
 * status, validTo, supersededBy, history, mention count or events, and not in what recall and
 * the context give another member. Each path is checked for a plain member and for an admin
 * (admins moderate shared facts but never see private ones); the author's own view is checked
 * beside them, so the scenario is known to have happened.
 */

const SHARED = 'Her favourite song was Moon River.';
const PRIVATE = 'Her favourite song was the lullaby Grandpa wrote.';
/** A word of the private fact that appears nowhere else. */
const SECRET = /lullaby|Grandpa/i;

const NOW = () => new Date().toISOString();

const FACT = `id content status validTo mentionCount supersededBy { id content }`;

interface Fact {
  id: string;
  content: string;
  status: string;
  validTo: string | null;
  mentionCount: number;
  supersededBy: { id: string; content: string } | null;
}

describe('Private facts do not leak through shared ones', () => {
  let t: TestApp;
  let ds: DataSource;
  let owner: TestUser;
  let author: TestUser;
  let member: TestUser;
  let admin: TestUser;
  let viewers: [string, TestUser][];
  let legacyId: string;
  let sharedId: string;
  let privateId: string;
  const conversationOf = new Map<TestUser, string>();

  const gql = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const facts = async (as: TestUser, status = 'ACTIVE') =>
    (
      await gql<{ facts: { nodes: Fact[] } }>(
        `query($l: ID!, $s: FactStatus) { facts(legacyId: $l, filter: { status: $s }, first: 100) {
           nodes { ${FACT} } } }`,
        { l: legacyId, s: status },
        as,
      )
    ).facts.nodes;
  const fact = async (as: TestUser, id: string) =>
    (await gql<{ fact: Fact }>(`query($id: ID!) { fact(id: $id) { ${FACT} } }`, { id }, as)).fact;
  const history = async (as: TestUser, id: string) =>
    (
      await gql<{
        factHistory: { action: string; status: string; mentionCount: number; detail: string }[];
      }>(
        `query($id: ID!) { factHistory(id: $id) { action status mentionCount detail content } }`,
        { id },
        as,
      )
    ).factHistory;
  const recall = async (as: TestUser, q: string) =>
    (
      await gql<{
        recall: { edges: { node: { sourceType: string; sourceId: string; text: string } }[] };
      }>(
        `query($l: ID!, $q: String!) { recall(legacyId: $l, query: $q, first: 50) {
           edges { node { sourceType sourceId text } } } }`,
        { l: legacyId, q },
        as,
      )
    ).recall.edges.map((e) => e.node);
  const context = async (as: TestUser, q: string) =>
    (
      await gql<{ context: { items: { sourceType: string; sourceId: string; text: string }[] } }>(
        `query($c: ID!, $q: String!) { context(conversationId: $c, query: $q) {
           items { sourceType sourceId text } } }`,
        { c: conversationOf.get(as), q },
        as,
      )
    ).context;
  const addFact = async (as: TestUser, content: string, visibility: string) =>
    (
      await gql<{ addFact: { id: string } }>(
        `mutation($i: AddFactInput!) { addFact(input: $i) { id } }`,
        { i: { legacyId, content, category: 'PREFERENCE', visibility } },
        as,
      )
    ).addFact.id;
  const share = (as: TestUser, id: string, visibility: string) =>
    gql(
      `mutation($id: ID!, $v: FactVisibility!) { setFactVisibility(id: $id, visibility: $v) { id } }`,
      { id, v: visibility },
      as,
    );
  const statusInDb = async (id: string) =>
    ((await ds.query(`SELECT status FROM facts WHERE id = $1`, [id])) as { status: string }[])[0]
      .status;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    ds = t.app.get(DataSource);
    owner = await t.user('privacy-owner', { email: 'owner@example.com' });
    author = await t.user('privacy-author', { email: 'author@example.com' });
    member = await t.user('privacy-member', { email: 'member@example.com' });
    admin = await t.user('privacy-admin', { email: 'admin@example.com' });
    viewers = [
      ['a plain member', member],
      ['an admin', admin],
    ];
    for (const u of [owner, author, member, admin]) await t.gql('{ me { id } }', {}, u);
    legacyId = (
      await gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Rose" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    await joinLegacy(t, owner, legacyId, author);
    await joinLegacy(t, owner, legacyId, member);
    await joinLegacy(t, owner, legacyId, admin, 'ADMIN');
    for (const u of [author, member, admin]) {
      const started = await gql<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        u,
      );
      conversationOf.set(u, started.startConversation.id);
    }
    sharedId = await addFact(author, SHARED, 'SHARED');
    privateId = await addFact(author, PRIVATE, 'PRIVATE');
  });
  afterAll(() => t.close());

  it('is the reported scenario: the private fact superseded the shared one', async () => {
    expect(await statusInDb(sharedId)).toBe('SUPERSEDED');
    const own = await fact(author, sharedId);
    expect(own).toMatchObject({ status: 'SUPERSEDED', supersededBy: { id: privateId } });
    expect(own.validTo).not.toBeNull();
    expect((await history(author, sharedId)).map((h) => h.action)).toContain('SUPERSEDED');
  });

  describe.each([
    ['a plain member', 'member'],
    ['an admin', 'admin'],
  ])('for %s', (_label, who) => {
    const viewer = () => (who === 'member' ? member : admin);

    it('lists the shared fact as ACTIVE, not under SUPERSEDED, and reads it as ACTIVE', async () => {
      const listed = (await facts(viewer())).find((f) => f.id === sharedId);
      expect(listed).toMatchObject({ status: 'ACTIVE', validTo: null, supersededBy: null });
      expect((await facts(viewer(), 'SUPERSEDED')).map((f) => f.id)).not.toContain(sharedId);
      expect(await fact(viewer(), sharedId)).toMatchObject({
        status: 'ACTIVE',
        validTo: null,
        supersededBy: null,
      });
    });

    it('shows a history without the supersession or anything of the private fact', async () => {
      const entries = await history(viewer(), sharedId);
      expect(entries.map((h) => h.action)).toEqual(['CREATED']);
      expect(JSON.stringify(entries)).not.toMatch(SECRET);
    });

    it('keeps the shared fact in recall and the context, and nothing of the private one', async () => {
      const recalled = await recall(viewer(), 'favourite song');
      expect(recalled.some((r) => r.sourceType === 'FACT' && r.sourceId === sharedId)).toBe(true);
      expect(JSON.stringify(recalled)).not.toMatch(SECRET);
      const given = await context(viewer(), 'What was her favourite song?');
      expect(
        given.items.some((i) => i.sourceType === 'FACT' && i.text.includes('Moon River')),
      ).toBe(true);
      expect(JSON.stringify(given)).not.toMatch(SECRET);
    });

    it('reveals nothing in exports and stats', async () => {
      const exported = await gql<{ exportMemories: unknown }>(
        '{ exportMemories(format: JSON) { data } }',
        {},
        viewer(),
      );
      const stats = await gql<{ memoryStats: unknown }>(
        '{ memoryStats { byStatus { status count } } }',
        {},
        viewer(),
      );
      expect(JSON.stringify([exported, stats])).not.toMatch(SECRET);
    });
  });

  it('does not tell the family when or how often the author mentions a shared fact', async () => {
    const id = await addFact(author, 'Rose loved sweet peas.', 'SHARED');
    const events = viewers.map(([, v]) =>
      subscribe<{ factChanged: { change: string; fact: Fact | null } }>(
        t.ws(v),
        'subscription($l: ID!) { factChanged(legacyId: $l) { change fact { id mentionCount } } }',
        { l: legacyId },
      ),
    );
    const authorEvents = subscribe<{ factChanged: { change: string; fact: Fact | null } }>(
      t.ws(author),
      'subscription($l: ID!) { factChanged(legacyId: $l) { change fact { id mentionCount } } }',
      { l: legacyId },
    );
    await Promise.all([...events, authorEvents].map((e) => e.ready));
    // The author says it again in their own conversation, and it is extracted there.
    const summaries = t.app.get(SummariesService);
    const imported = await gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($i: ImportConversationInput!) { importConversation(input: $i) { conversation { id } } }`,
      {
        i: {
          legacyId,
          messages: [
            { role: 'USER', content: 'Rose loved sweet peas.', occurredAt: NOW() },
            { role: 'ASSISTANT', content: 'How lovely.', occurredAt: NOW() },
          ],
        },
      },
      author,
    );
    while (await summaries.summarizeNext(imported.importConversation.conversation.id, true));
    const [own] = await authorEvents.waitFor(1);
    expect(own.data!.factChanged).toEqual({
      change: 'UPDATED',
      fact: { id, mentionCount: 2 },
    });
    expect((await fact(author, id)).mentionCount).toBe(2);
    expect((await history(author, id)).map((h) => h.action)).toContain('MENTIONED');

    // A later, visible change: the only event the family gets.
    await share(author, id, 'PRIVATE');
    for (const [label, v] of viewers) {
      const [first, ...rest] = await events[viewers.findIndex(([l]) => l === label)].waitFor(1);
      expect(first.data!.factChanged).toEqual({ change: 'REMOVED', fact: null });
      expect(rest).toEqual([]);
      void v;
    }
    await share(author, id, 'SHARED');
    for (const [, v] of viewers) {
      const seen = await fact(v, id);
      // Shared again now: the family sees the count as it stands at this sharing.
      expect(seen.mentionCount).toBe(2);
      expect((await history(v, id)).map((h) => h.action)).not.toContain('MENTIONED');
    }
  });

  it('shows the family the supersession once the newer fact is shared, and hides it again', async () => {
    const subs = viewers.map(([, v]) =>
      subscribe<{ factChanged: { change: string; fact: Fact | null } }>(
        t.ws(v),
        `subscription($l: ID!) { factChanged(legacyId: $l) { change fact { ${FACT} } } }`,
        { l: legacyId },
      ),
    );
    await Promise.all(subs.map((s) => s.ready));
    const changedAt = async (as: TestUser) =>
      (
        await gql<{ fact: { updatedAt: string } }>(
          'query($id: ID!) { fact(id: $id) { updatedAt } }',
          { id: sharedId },
          as,
        )
      ).fact.updatedAt;
    const seenBefore = await Promise.all(viewers.map(([, v]) => changedAt(v)));
    const authorBefore = await changedAt(author);
    await share(author, privateId, 'SHARED');
    // The older fact changed for the family (it is superseded now), not for its author.
    const seenShared = await Promise.all(viewers.map(([, v]) => changedAt(v)));
    for (const [i, at] of seenShared.entries()) expect(at > seenBefore[i]).toBe(true);
    expect(await changedAt(author)).toBe(authorBefore);
    for (const [i, [, v]] of viewers.entries()) {
      const events = await subs[i].waitFor(2);
      const older = events.find((e) => e.data!.factChanged.fact?.id === sharedId);
      expect(older!.data!.factChanged).toMatchObject({
        change: 'UPDATED',
        fact: { status: 'SUPERSEDED', supersededBy: { id: privateId } },
      });
      expect((await facts(v, 'SUPERSEDED')).map((f) => f.id)).toContain(sharedId);
      expect((await history(v, sharedId)).map((h) => h.action)).toEqual(['CREATED', 'SUPERSEDED']);
    }
    // Private again: the family is back to the shared fact alone, told so.
    await share(author, privateId, 'PRIVATE');
    for (const [i, [, v]] of viewers.entries()) {
      expect((await changedAt(v)) > seenShared[i]).toBe(true);
      const events = await subs[i].waitFor(4);
      const back = events.slice(2).find((e) => e.data!.factChanged.fact?.id === sharedId)!.data!
        .factChanged;
      expect(back).toMatchObject({ change: 'UPDATED', fact: { status: 'ACTIVE', validTo: null } });
      expect(await fact(v, sharedId)).toMatchObject({ status: 'ACTIVE', supersededBy: null });
    }
  });

  it('shows a shared fact stored superseded by an earlier private one as ACTIVE (the mirror case)', async () => {
    // The newer private fact first; then an older statement, imported, shared by its author.
    await addFact(author, 'Her favourite colour was green.', 'PRIVATE');
    const summaries = t.app.get(SummariesService);
    const imported = await gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($i: ImportConversationInput!) { importConversation(input: $i) { conversation { id } } }`,
      {
        i: {
          legacyId,
          messages: [
            {
              role: 'USER',
              content: 'Her favourite colour was blue.',
              occurredAt: '2001-05-01T10:00:00Z',
            },
            { role: 'ASSISTANT', content: 'I see.', occurredAt: '2001-05-01T10:00:01Z' },
          ],
        },
      },
      author,
    );
    while (await summaries.summarizeNext(imported.importConversation.conversation.id, true));
    const blue = (await facts(author, 'SUPERSEDED')).find((f) => /colour was blue/.test(f.content));
    expect(blue).toBeDefined();
    await share(author, blue!.id, 'SHARED');
    for (const [, v] of viewers) {
      expect(await fact(v, blue!.id)).toMatchObject({
        status: 'ACTIVE',
        validTo: null,
        supersededBy: null,
      });
      expect((await facts(v)).map((f) => f.id)).toContain(blue!.id);
      expect(JSON.stringify(await history(v, blue!.id))).not.toMatch(/green/);
    }
  });

  it('tells the family nothing of a private superseder once it goes with its only source', async () => {
    const older = await addFact(author, 'Her favourite flower was the daisy.', 'SHARED');
    const newer = await addFact(
      author,
      'Her favourite flower was the night-scented stock Grandpa grew.',
      'PRIVATE',
    );
    expect(await fact(author, older)).toMatchObject({
      status: 'SUPERSEDED',
      supersededBy: { id: newer },
    });
    // Its only mention goes, as when the story or conversation it came from is deleted.
    await ds.query(`DELETE FROM fact_sources WHERE fact_id = $1`, [newer]);
    expect(await ds.query(`SELECT id FROM facts WHERE id = $1`, [newer])).toEqual([]);
    expect(await fact(author, older)).toMatchObject({ status: 'ACTIVE', supersededBy: null });
    // The author still reads the whole story of their fact.
    expect((await history(author, older)).map((h) => h.action)).toEqual([
      'CREATED',
      'SUPERSEDED',
      'RESTORED',
    ]);
    for (const [, v] of viewers) {
      const seen = await history(v, older);
      expect(seen.map((h) => h.action)).toEqual(['CREATED']);
      expect(JSON.stringify(seen)).not.toMatch(/night-scented|Grandpa|removed/);
    }
  });

  it('answers a command on a shared fact with the fact as its runner sees it, not as stored', async () => {
    const sharedFlower = await addFact(author, 'Her favourite flower was the sweet pea.', 'SHARED');
    const privateFlower = await addFact(author, 'Her favourite flower was the tulip.', 'PRIVATE');
    expect(await fact(author, sharedFlower)).toMatchObject({
      status: 'SUPERSEDED',
      supersededBy: { id: privateFlower },
    });
    const command = async (as: TestUser, mutation: string) =>
      (await gql<Record<string, Fact>>(
        `mutation($id: ID!) { ${mutation} { ${FACT} } }`,
        { id: sharedFlower },
        as,
      )) as Record<string, Fact>;
    for (const [, v] of viewers) {
      // Restoring a fact that is not deleted changes nothing, and tells nothing either.
      const { restoreFact } = await command(v, 'restoreFact(id: $id)');
      expect(restoreFact).toMatchObject({ status: 'ACTIVE', validTo: null, supersededBy: null });
    }
    // The admin takes it back to private: what they are answered hides the supersession too.
    const { setFactVisibility } = await command(
      admin,
      'setFactVisibility(id: $id, visibility: PRIVATE)',
    );
    expect(setFactVisibility).toMatchObject({
      status: 'ACTIVE',
      validTo: null,
      supersededBy: null,
    });
    expect(JSON.stringify(setFactVisibility)).not.toMatch(/tulip/);
    // Its author still sees it as it is.
    expect(await fact(author, sharedFlower)).toMatchObject({ status: 'SUPERSEDED' });
  });

  it('lets an admin undo their delete when the author has since said it again privately, telling nothing of it', async () => {
    const text = 'Rose grew up in Leeds.';
    const shared = await addFact(author, text, 'SHARED');
    await gql('mutation($id: ID!) { deleteFact(id: $id) { id } }', { id: shared }, admin);
    const twin = await addFact(author, text, 'PRIVATE');
    expect(twin).not.toBe(shared);
    const { restoreFact } = await gql<{ restoreFact: Fact }>(
      `mutation($id: ID!) { restoreFact(id: $id) { ${FACT} } }`,
      { id: shared },
      admin,
    );
    // As it would be without the private twin: restored, active.
    expect(restoreFact).toMatchObject({ id: shared, status: 'ACTIVE', supersededBy: null });
    for (const [, v] of viewers) {
      expect(await fact(v, shared)).toMatchObject({ status: 'ACTIVE', validTo: null });
    }
    // Its author sees their private fact as the one that says it now.
    expect(await fact(author, shared)).toMatchObject({
      status: 'SUPERSEDED',
      supersededBy: { id: twin },
    });
    expect(await fact(author, twin)).toMatchObject({ status: 'ACTIVE' });
  });

  it("shows the family a shared fact's confidence and last change as of what they could see", async () => {
    const F = 'id content confidence mentionCount updatedAt';
    type Seen = { id: string; content: string; confidence: number; updatedAt: string };
    const summaries = t.app.get(SummariesService);
    const say = async (content: string) => {
      const imported = await gql<{ importConversation: { conversation: { id: string } } }>(
        `mutation($i: ImportConversationInput!) { importConversation(input: $i) { conversation { id } } }`,
        {
          i: {
            legacyId,
            messages: [
              { role: 'USER', content, occurredAt: NOW() },
              { role: 'ASSISTANT', content: 'How lovely.', occurredAt: NOW() },
            ],
          },
        },
        author,
      );
      while (await summaries.summarizeNext(imported.importConversation.conversation.id, true));
    };
    const read = async (as: TestUser, id: string) =>
      (await gql<{ fact: Seen }>(`query($id: ID!) { fact(id: $id) { ${F} } }`, { id }, as)).fact;
    await say('She loved marigolds.');
    const extracted = (
      await gql<{ facts: { nodes: Seen[] } }>(
        `query($l: ID!) { facts(legacyId: $l, first: 100) { nodes { ${F} } } }`,
        { l: legacyId },
        author,
      )
    ).facts.nodes.find((f) => /marigolds/.test(f.content))!;
    expect(extracted.confidence).toBeLessThan(1);
    await share(author, extracted.id, 'SHARED');
    const before = await Promise.all(viewers.map(([, v]) => read(v, extracted.id)));
    const events = viewers.map(([, v]) =>
      subscribe<{ factChanged: { change: string } }>(
        t.ws(v),
        'subscription($l: ID!) { factChanged(legacyId: $l) { change factId } }',
        { l: legacyId },
      ),
    );
    await Promise.all(events.map((e) => e.ready));
    // Said again, in private, more firmly: the author's fact changes, the family's does not.
    await say('Rose loved marigolds.');
    const own = await read(author, extracted.id);
    expect(own.confidence).toBeGreaterThan(extracted.confidence);
    expect(own.updatedAt).not.toBe(extracted.updatedAt);
    for (const [i, [, v]] of viewers.entries()) {
      expect(await read(v, extracted.id)).toEqual(before[i]);
    }
    // A change they can see moves what they see, and is the only event they get.
    await share(author, extracted.id, 'PRIVATE');
    await share(author, extracted.id, 'SHARED');
    for (const [i, [, v]] of viewers.entries()) {
      const now = await read(v, extracted.id);
      expect(now.confidence).toBe(own.confidence);
      expect(now.updatedAt).not.toBe(before[i].updatedAt);
      const seen = await events[i].waitFor(2);
      expect(seen.map((e) => e.data!.factChanged.change)).toEqual([
        'REMOVED',
        'VISIBILITY_CHANGED',
      ]);
    }
  });

  it('keeps a shared fact coming back from a private supersession out of what the family sees', async () => {
    const older = await addFact(author, 'Her favourite colour was green.', 'SHARED');
    const newer = await addFact(author, 'Her favourite colour was blue.', 'PRIVATE');
    expect(await fact(author, older)).toMatchObject({
      status: 'SUPERSEDED',
      supersededBy: { id: newer },
    });
    const before = await Promise.all(viewers.map(([, v]) => history(v, older)));
    // Said again, in private: in effect again for its author; for the family it never stopped.
    await addFact(author, 'Her favourite colour was green.', 'PRIVATE');
    expect((await history(author, older)).map((h) => h.action)).toContain('RESTORED');
    for (const [i, [, v]] of viewers.entries()) {
      expect(await history(v, older)).toEqual(before[i]);
      expect(await fact(v, older)).toMatchObject({ status: 'ACTIVE' });
    }
  });

  it("counts for the family only the mentions they saw when a shared fact restates the author's private one", async () => {
    await addFact(author, 'Rose grew tomatoes.', 'PRIVATE');
    await addFact(author, 'Rose grew tomatoes.', 'PRIVATE');
    const restated = await addFact(author, 'Rose grew tomatoes in her greenhouse.', 'SHARED');
    // The scenario: the private fact's two mentions went over to the shared one.
    expect(await fact(author, restated)).toMatchObject({ status: 'ACTIVE', mentionCount: 3 });
    for (const [, v] of viewers) {
      expect(await fact(v, restated)).toMatchObject({ mentionCount: 1 });
      expect((await history(v, restated)).map((h) => [h.action, h.mentionCount])).toEqual([
        ['CREATED', 1],
      ]);
    }
    // Restating a shared fact carries the count the family saw of it, not the author's since.
    const seen = await addFact(author, 'Rose kept bees.', 'SHARED');
    await addFact(author, 'Rose kept bees.', 'SHARED');
    expect(await fact(author, seen)).toMatchObject({ mentionCount: 2 });
    const detailed = await addFact(author, 'Rose kept bees behind the orchard.', 'SHARED');
    expect(await fact(author, detailed)).toMatchObject({ mentionCount: 3 });
    for (const [, v] of viewers) {
      expect(await fact(v, detailed)).toMatchObject({ mentionCount: 2 });
    }
  });

  it('gives the author the family view of their own facts when asked, the same as a plain member gets', async () => {
    const F = `id authorId content status validTo mentionCount confidence updatedAt visibility
      supersededBy { id content mentionCount } sources { id }`;
    const list = async (as: TestUser, filter: Record<string, unknown>) =>
      (
        await gql<{ facts: { nodes: { authorId: string }[] } }>(
          `query($l: ID!, $f: FactFilter) { facts(legacyId: $l, filter: $f, first: 100) { nodes { ${F} } } }`,
          { l: legacyId, f: filter },
          as,
        )
      ).facts.nodes;
    // The member's own: shared twice (their count is 2, the family's 1), and a private one.
    await addFact(member, 'Rose hummed while she cooked.', 'SHARED');
    await addFact(member, 'Rose hummed while she cooked.', 'SHARED');
    await addFact(member, 'Rose hid sweets for the grandchildren.', 'PRIVATE');
    // The owner wrote no fact here: their own view is the family's.
    for (const status of ['ACTIVE', 'SUPERSEDED', 'DELETED']) {
      const family = await list(owner, { status });
      for (const as of [author, member, admin, owner]) {
        expect(await list(as, { status, asFamily: true })).toEqual(family);
      }
    }
    expect(JSON.stringify(await list(owner, {}))).not.toMatch(/sweets/);
    expect(JSON.stringify(await list(member, {}))).toMatch(/sweets/);
    // The scenario: the author's own view differs (private facts, their count and supersession).
    const own = JSON.stringify(await list(author, {}));
    expect(own).toMatch(SECRET);
    expect(JSON.stringify(await list(author, { asFamily: true }))).not.toMatch(SECRET);
  });

  it("moves the family's updatedAt of a superseded fact when its superseder is deleted or restored", async () => {
    const older = await addFact(author, 'Her favourite flower was the tulip.', 'SHARED');
    const newer = await addFact(author, 'Her favourite flower was the rose.', 'SHARED');
    const seenAs = async (as: TestUser) =>
      (
        await gql<{ fact: { status: string; updatedAt: string } }>(
          'query($id: ID!) { fact(id: $id) { status updatedAt } }',
          { id: older },
          as,
        )
      ).fact;
    const before = await Promise.all(viewers.map(([, v]) => seenAs(v)));
    for (const b of before) expect(b.status).toBe('SUPERSEDED');
    await gql('mutation($id: ID!) { deleteFact(id: $id) { id } }', { id: newer }, author);
    const released = await Promise.all(viewers.map(([, v]) => seenAs(v)));
    for (const [i, r] of released.entries()) {
      expect(r.status).toBe('ACTIVE');
      expect(r.updatedAt > before[i].updatedAt).toBe(true);
    }
    await gql('mutation($id: ID!) { restoreFact(id: $id) { id } }', { id: newer }, author);
    for (const [i, [, v]] of viewers.entries()) {
      const again = await seenAs(v);
      expect(again.status).toBe('SUPERSEDED');
      expect(again.updatedAt > released[i].updatedAt).toBe(true);
    }
  });

  it('shows the family only the confidence they saw of the facts a shared fact restates', async () => {
    // Set up as the reconciler leaves them, then restated the way it restates (carry, recount).
    const restate = (fromId: string, toId: string) =>
      ds.transaction(async (m) => {
        await t.app.get(FactSourceRepository).carryOver(m, fromId, toId);
        await t.app.get(FactRepository).recountMentions(m, fromId, toId);
      });
    const confidence = async (as: TestUser, id: string) =>
      (
        await gql<{ fact: { confidence: number } }>(
          'query($id: ID!) { fact(id: $id) { confidence } }',
          { id },
          as,
        )
      ).fact.confidence;
    const shared = await addFact(author, 'Rose sewed quilts.', 'SHARED');
    const hidden = await addFact(author, 'Rose baked rye bread.', 'PRIVATE');
    const seen = await addFact(author, 'Rose kept goats.', 'SHARED');
    await ds.query(`UPDATE facts SET confidence = 0.5, shared_confidence = 0.5 WHERE id = $1`, [
      shared,
    ]);
    await ds.query(`UPDATE facts SET confidence = 0.9 WHERE id = $1`, [hidden]);
    // The family saw 0.6; the author's private restatements raised it to 0.9 since.
    await ds.query(`UPDATE facts SET confidence = 0.9, shared_confidence = 0.6 WHERE id = $1`, [
      seen,
    ]);

    await restate(hidden, shared);
    expect(await confidence(author, shared)).toBeCloseTo(0.9);
    for (const [, v] of viewers) expect(await confidence(v, shared)).toBeCloseTo(0.5);
    await restate(seen, shared);
    expect(await fact(author, shared)).toMatchObject({ mentionCount: 3 });
    for (const [, v] of viewers) {
      expect(await fact(v, shared)).toMatchObject({ mentionCount: 2 });
      expect(await confidence(v, shared)).toBeCloseTo(0.6);
    }
  });
});
