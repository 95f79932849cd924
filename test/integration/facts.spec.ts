import { DataSource } from 'typeorm';
import { ContextAssemblerService } from '../../src/context/context-assembler.service.js';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import { UserEntity } from '../../src/identity/user.entity.js';
import { LegacyRepository } from '../../src/legacies/legacy.repository.js';
import { SUMMARIZE_JOB, SummariesService } from '../../src/summaries/summaries.service.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { joinLegacy } from '../support/membership.js';

interface Fact {
  id: string;
  content: string;
  category: string;
  visibility: string;
  status: string;
  mentionCount: number;
  confidence: number;
  validFrom: string;
  validTo: string | null;
  sourceConversationId: string | null;
  sourceRangeStart: number | null;
  sourceRangeEnd: number | null;
  sourceMessageIds: string[];
  supersededBy: { id: string; content: string } | null;
  sources: { kind: string; conversationId: string | null; rangeStart: number | null }[];
}

const FACT_FIELDS = `id content category visibility status mentionCount confidence validFrom validTo
  sourceConversationId sourceRangeStart sourceRangeEnd sourceMessageIds
  supersededBy { id content } sources { kind conversationId rangeStart }`;

/**
 * Facts from summarization with the offline models (the heuristic LLM and USE-lite embeddings):
 * provenance, duplicates and contradictions within a conversation and across conversations,
 * deletions that are respected, hand-written facts, the context section, and conversation
 * deletion taking its derived facts with it.
 */
describe('facts from conversations', () => {
  let t: TestApp;
  let ds: DataSource;
  let summaries: SummariesService;
  let alice: TestUser;
  let bob: TestUser;
  let legacyId: string;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    ds = t.app.get(DataSource);
    summaries = t.app.get(SummariesService);
    alice = await t.user('facts-alice', { email: 'alice@example.com' });
    bob = await t.user('facts-bob', { email: 'bob@example.com' });
    await t.gql('{ me { id } }', {}, bob);
    legacyId = await createLegacy('Joe', alice, bob);
  });
  afterAll(() => t.close());

  async function createLegacy(name: string, owner: TestUser, member?: TestUser) {
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation($name: String!) { createLegacy(input: { name: $name }) { id } }',
      { name },
      owner,
    );
    const id = created.data!.createLegacy.id;
    if (member) {
      await joinLegacy(t, owner, id, member);
    }
    return id;
  }

  let clock = Date.UTC(2024, 0, 1);

  /** A conversation where `who` says each line (the assistant nods between), summarized now. */
  async function say(
    who: TestUser,
    lines: string[],
    options: { at?: Date; legacy?: string } = {},
  ): Promise<string> {
    // Each conversation an hour after the previous one: the order things were said is fixed.
    clock += 3_600_000;
    const start = options.at?.getTime() ?? clock;
    const messages = lines.flatMap((content, i) => [
      { role: 'USER', content, occurredAt: new Date(start + i * 2000).toISOString() },
      {
        role: 'ASSISTANT',
        content: 'I see.',
        occurredAt: new Date(start + i * 2000 + 1000).toISOString(),
      },
    ]);
    const res = await t.gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($input: ImportConversationInput!) {
         importConversation(input: $input) { conversation { id } } }`,
      { input: { legacyId: options.legacy ?? legacyId, messages } },
      who,
    );
    const id = res.data!.importConversation.conversation.id;
    while (await summaries.summarizeNext(id, true));
    return id;
  }

  async function facts(who: TestUser, filter: Record<string, unknown> = {}, legacy = legacyId) {
    const res = await t.gql<{ facts: { nodes: Fact[] } }>(
      `query($legacyId: ID!, $filter: FactFilter) {
         facts(legacyId: $legacyId, filter: $filter, first: 100) { nodes { ${FACT_FIELDS} } } }`,
      { legacyId: legacy, filter },
      who,
    );
    expect(res.errors).toBeUndefined();
    return res.data!.facts.nodes;
  }

  const byContent = async (who: TestUser, content: string, filter = {}) =>
    (await facts(who, filter)).find((f) => f.content === content);

  async function history(who: TestUser, id: string) {
    const res = await t.gql<{
      factHistory: {
        action: string;
        status: string;
        detail: string | null;
        relatedFact: { id: string } | null;
      }[];
    }>(
      `query($id: ID!) { factHistory(id: $id) { action status detail relatedFact { id } } }`,
      { id },
      who,
    );
    expect(res.errors).toBeUndefined();
    return res.data!.factHistory;
  }

  it('stores facts stated in a conversation, with where they were said', async () => {
    const id = await say(alice, [
      'Joe loved fishing on the lake.',
      'Joe taught school.',
      'How are you?',
    ]);
    const fishing = await byContent(alice, 'Joe loved fishing on the lake.');
    const [message] = await ds.query(
      `SELECT id FROM messages WHERE conversation_id = $1 AND turn_index = 0`,
      [id],
    );
    expect(fishing).toMatchObject({
      category: 'HOBBY',
      visibility: 'PRIVATE',
      status: 'ACTIVE',
      mentionCount: 1,
      sourceConversationId: id,
      sourceRangeStart: 0,
      sourceRangeEnd: 0,
      sourceMessageIds: [message.id],
      validTo: null,
      sources: [{ kind: 'CONVERSATION', conversationId: id, rangeStart: 0 }],
    });
    expect(fishing!.confidence).toBeGreaterThanOrEqual(0.7);
    expect(await byContent(alice, 'Joe taught school.')).toMatchObject({ category: 'OCCUPATION' });
    // Nobody else sees a private fact.
    expect(await facts(bob)).toEqual([]);
  });

  it('counts a restatement as a mention, within a conversation and across conversations', async () => {
    const filler = Array.from({ length: 12 }, (_, i) => `We talked about the weather, part ${i}.`);
    // Turn 24 lies in the second batch of 20 turns: a second range of the same conversation.
    await say(alice, [...filler, 'Joe loved fishing on the lake.']);
    await say(alice, ['Joe enjoyed fishing at the lake.']);
    const fishing = (await facts(alice)).filter((f) => /fishing/.test(f.content));
    expect(fishing).toHaveLength(1);
    expect(fishing[0].mentionCount).toBe(3);
    expect(fishing[0].sources.map((s) => s.kind)).toEqual([
      'CONVERSATION',
      'CONVERSATION',
      'CONVERSATION',
    ]);
    expect((await history(alice, fishing[0].id)).map((h) => h.action)).toEqual([
      'CREATED',
      'MENTIONED',
      'MENTIONED',
    ]);

    // Another member saying the same thing has a fact of their own.
    await say(bob, ['Joe loved fishing on the lake.']);
    expect((await facts(bob)).map((f) => [f.content, f.mentionCount])).toEqual([
      ['Joe loved fishing on the lake.', 1],
    ]);

    // Written by hand, a restatement is a mention too.
    const added = await t.gql<{ addFact: { id: string; mentionCount: number } }>(
      `mutation($input: AddFactInput!) { addFact(input: $input) { id mentionCount } }`,
      { input: { legacyId, content: 'joe loved fishing on the lake', category: 'HOBBY' } },
      alice,
    );
    expect(added.data!.addFact).toEqual({ id: fishing[0].id, mentionCount: 4 });
  });

  it('lets a restatement with more detail supersede the fact and keep its mentions', async () => {
    await say(alice, ['Joe built wooden boats.']);
    await say(alice, ['Joe built wooden boats.']);
    const before = await byContent(alice, 'Joe built wooden boats.');
    expect(before!.mentionCount).toBe(2);
    await say(alice, ['Joe built wooden boats in his garage.']);
    const detailed = await byContent(alice, 'Joe built wooden boats in his garage.');
    const older = await byContent(alice, 'Joe built wooden boats.', { status: 'SUPERSEDED' });
    expect(older!.supersededBy!.id).toBe(detailed!.id);
    expect(detailed).toMatchObject({ status: 'ACTIVE', mentionCount: 3 });
    expect(detailed!.sources).toHaveLength(3);
    const entries = await history(alice, older!.id);
    expect(entries.map((h) => h.action)).toEqual(['CREATED', 'MENTIONED', 'SUPERSEDED']);
    expect(entries[2].detail).toMatch(/^update: the same, with more detail/);
  });

  it('supersedes a corrected fact within one conversation, keeping its history', async () => {
    await say(alice, ['Joe was born in Ohio.', 'No wait, I was wrong.', 'Joe was born in Iowa.']);
    const ohio = await byContent(alice, 'Joe was born in Ohio.', { status: 'SUPERSEDED' });
    const iowa = await byContent(alice, 'Joe was born in Iowa.');
    expect(iowa).toMatchObject({ status: 'ACTIVE', validTo: null });
    expect(ohio).toMatchObject({
      status: 'SUPERSEDED',
      supersededBy: { id: iowa!.id, content: 'Joe was born in Iowa.' },
    });
    expect(ohio!.validTo).toBe(iowa!.validFrom);
    const entries = await history(alice, ohio!.id);
    expect(entries.map((h) => [h.action, h.status])).toEqual([
      ['CREATED', 'ACTIVE'],
      ['SUPERSEDED', 'SUPERSEDED'],
    ]);
    expect(entries[1].detail).toMatch(/correction: born place: "ohio" became "iowa"/);
    expect(entries[1].relatedFact).toEqual({ id: iowa!.id });
    // Not silently overwritten: the old fact is still there, as history.
    expect((await facts(alice)).some((f) => f.content === 'Joe was born in Ohio.')).toBe(false);
  });

  it('supersedes across conversations, and files a statement made earlier straight as history', async () => {
    await say(alice, ['Joe retired from teaching in 1998.']);
    const taught = await byContent(alice, 'Joe taught school.', { status: 'SUPERSEDED' });
    const retired = await byContent(alice, 'Joe retired from teaching in 1998.');
    expect(taught!.supersededBy!.id).toBe(retired!.id);
    expect((await history(alice, taught!.id))[1].detail).toMatch(/^update:/);

    // An old conversation, imported now, where Joe's birthplace was given as Kansas.
    await say(alice, ['Joe was born in Kansas.'], { at: new Date('2001-05-01T10:00:00Z') });
    const kansas = await byContent(alice, 'Joe was born in Kansas.', { status: 'SUPERSEDED' });
    const iowa = await byContent(alice, 'Joe was born in Iowa.');
    expect(iowa!.status).toBe('ACTIVE');
    expect(kansas!.supersededBy!.id).toBe(iowa!.id);
    expect(kansas!.validTo).toBe(iowa!.validFrom);
  });

  it('brings a superseded fact back when it is said again, rather than a twin', async () => {
    await say(alice, ["Joe's favourite song was Moon River."]);
    await say(alice, ["Joe's favourite song was Blue Moon."]);
    await say(alice, ["Joe's favourite song was Moon River."]);
    const songs = async (status: string) =>
      (await facts(alice, { status })).filter((f) => /favourite song/.test(f.content));
    const [active] = await songs('ACTIVE');
    const [superseded] = await songs('SUPERSEDED');
    expect((await songs('ACTIVE')).map((f) => f.content)).toEqual([
      "Joe's favourite song was Moon River.",
    ]);
    expect(superseded).toMatchObject({
      content: "Joe's favourite song was Blue Moon.",
      supersededBy: { id: active.id },
    });
    expect(active).toMatchObject({ mentionCount: 2, validTo: null, supersededBy: null });
    const entries = await history(alice, active.id);
    expect(entries.map((h) => h.action)).toEqual(['CREATED', 'SUPERSEDED', 'RESTORED']);
    // In effect again, not "said again": the family may see the first, never a mention.
    expect(entries[2].detail).toBe('In effect again after a newer fact had superseded it.');
  });

  it('does not bring back a fact its author deleted', async () => {
    await say(alice, ['Joe loved golf.']);
    const golf = await byContent(alice, 'Joe loved golf.');
    const deleted = await t.gql(
      'mutation($id: ID!) { deleteFact(id: $id) { status } }',
      { id: golf!.id },
      alice,
    );
    expect(deleted.data).toEqual({ deleteFact: { status: 'DELETED' } });
    await say(alice, ['Joe loved golf.']);
    expect(await byContent(alice, 'Joe loved golf.')).toBeUndefined();
    expect((await facts(alice, { status: 'DELETED' })).map((f) => f.content)).toEqual([
      'Joe loved golf.',
    ]);
  });

  it("gives the agent the user's own and the shared facts, marked, with provenance", async () => {
    const aliceFacts = await facts(alice);
    const iowa = aliceFacts.find((f) => f.content === 'Joe was born in Iowa.')!;
    await t.gql(
      `mutation($id: ID!) { setFactVisibility(id: $id, visibility: SHARED) { visibility } }`,
      { id: iowa.id },
      alice,
    );
    const users = await ds.query(`SELECT * FROM users WHERE subject = $1`, ['facts-bob']);
    const bobEntity = Object.assign(new UserEntity(), {
      ...users[0],
      rememberByDefault: users[0].remember_by_default,
    });
    const conversationId = await say(bob, ['Where was Joe born?']);
    const conversation = (await t.app.get(ConversationsService).findByIds([conversationId]))[0];
    const legacy = (await t.app.get(LegacyRepository).findById(legacyId))!;
    const context = await t.app.get(ContextAssemblerService).assemble({
      user: bobEntity,
      conversation,
      legacy,
      query: 'Where was Joe born?',
    });
    const section = context.sections.find((s) => s.name === 'facts')!;
    const texts = section.items.map((i) => i.text);
    // Alice's words, quoted: Bob's prompt gives them as data, never as its own lines.
    expect(texts).toContain('- [milestone, shared by another member] "Joe was born in Iowa."');
    expect(texts).toContain('- [hobby, personal] Joe loved fishing on the lake.');
    // Alice's private facts never reach Bob's prompt.
    expect(texts.some((x) => /taught|retired|golf/.test(x))).toBe(false);
    // Most relevant first.
    expect(section.items[0].id).toBe(iowa.id);
    expect(context.system).toContain('## What the family has shared about Joe');
    const own = section.items.find((i) => i.text.includes('fishing'))!;
    expect(own.provenance).toMatchObject({ sourceType: 'FACT', turnRange: { start: 0, end: 0 } });
    expect(own.provenance.messageIds).toHaveLength(1);
    expect(own.provenance.messageMetadata).toEqual([{}]);
    // Another member's shared fact is traced to the fact, not into their conversation.
    const shared = section.items.find((i) => i.id === iowa.id)!;
    expect(shared.provenance).toMatchObject({
      conversationId: null,
      messageIds: [],
      turnRange: null,
    });
  });

  it('runs the summarization job twice with no second effect', async () => {
    const id = await say(bob, ['Joe kept bees behind the house.']);
    const snapshot = () =>
      ds.query(
        `SELECT f.id, f.mention_count, f.status, (SELECT count(*) FROM fact_sources s WHERE s.fact_id = f.id) AS sources
           FROM facts f WHERE f.legacy_id = $1 ORDER BY f.id`,
        [legacyId],
      );
    const before = await snapshot();
    const jobs = t.app.get(JobsService);
    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id, force: true });
    await jobs.runHandler(SUMMARIZE_JOB, { conversationId: id, force: true });
    expect(await snapshot()).toEqual(before);
  });

  it('removes the facts a deleted conversation gave, and reinstates what they had superseded', async () => {
    const mary = await createLegacy('Mary', alice);
    await say(alice, ['Mary was born in Cork.'], { legacy: mary });
    const later = await say(alice, ['Mary was born in Dublin.', 'Mary loved the sea.'], {
      legacy: mary,
    });
    const kept = await say(alice, ['Mary loved the sea.'], { legacy: mary });
    const list = async () =>
      (await facts(alice, {}, mary)).map((f) => [f.content, f.status, f.mentionCount]).sort();
    expect(await list()).toEqual([
      ['Mary loved the sea.', 'ACTIVE', 2],
      ['Mary was born in Dublin.', 'ACTIVE', 1],
    ]);
    const [dublin] = await ds.query(
      `SELECT id FROM facts WHERE content = 'Mary was born in Dublin.'`,
    );

    await t.gql('mutation($id: ID!) { deleteConversation(id: $id) }', { id: later }, alice);
    expect(await list()).toEqual([
      ['Mary loved the sea.', 'ACTIVE', 1],
      ['Mary was born in Cork.', 'ACTIVE', 1],
    ]);
    expect(
      await ds.query(`SELECT 1 FROM embeddings WHERE kind = 'fact' AND item_id = $1`, [dublin.id]),
    ).toEqual([]);
    const cork = (await facts(alice, {}, mary)).find(
      (f) => f.content === 'Mary was born in Cork.',
    )!;
    expect(cork.validTo).toBeNull();
    expect((await history(alice, cork.id)).map((h) => h.action)).toEqual([
      'CREATED',
      'SUPERSEDED',
      'RESTORED',
    ]);
    // The surviving fact now cites the conversation that is left.
    const sea = (await facts(alice, {}, mary)).find((f) => f.content === 'Mary loved the sea.')!;
    expect(sea).toMatchObject({
      sourceConversationId: kept,
      sourceRangeStart: 0,
      sources: [{ kind: 'CONVERSATION', conversationId: kept, rangeStart: 0 }],
    });
  });

  it('keeps the shared mention count of a shared fact its superseder no longer hides', async () => {
    const [cork] = await ds.query(`SELECT id FROM facts WHERE content = 'Mary was born in Cork.'`);
    const [sea] = await ds.query(`SELECT id FROM facts WHERE content = 'Mary loved the sea.'`);
    await ds.query(
      `UPDATE facts SET visibility = 'SHARED', shared_mention_count = 2, status = 'SUPERSEDED',
                        superseded_by = $2, valid_to = now()
        WHERE id = $1`,
      [cork.id, sea.id],
    );
    await ds.query(`UPDATE facts SET visibility = 'SHARED' WHERE id = $1`, [sea.id]);
    await ds.query(`DELETE FROM facts WHERE id = $1`, [sea.id]);
    const [restored] = await ds.query(
      `SELECT visibility, shared_mention_count AS shared, detail FROM fact_history
        WHERE fact_id = $1 AND action = 'RESTORED' ORDER BY created_at DESC LIMIT 1`,
      [cork.id],
    );
    expect(restored).toEqual({
      visibility: 'SHARED',
      shared: 2,
      detail: 'The fact that superseded it was removed.',
    });
  });
});
