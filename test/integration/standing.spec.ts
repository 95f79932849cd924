import { DataSource } from 'typeorm';
import type { UserEntity } from '../../src/identity/user.entity.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { HybridSearchService } from '../../src/search/hybrid-search.service.js';
import { STANDING_PATTERN, STANDING_TURN_SQL } from '../../src/search/standing.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * A member's standing instructions and preferences ("Always include the dates when I ask about
 * history", "I prefer short answers") apply to every later request on their subject: search
 * finds them on a path of their own, from a partial index, and raises the best of them. Said
 * to a person in an imported dialogue, the same words are advice, not instructions.
 */
describe('Standing instructions and preferences', () => {
  let t: TestApp;
  let ds: DataSource;
  let alice: TestUser;
  let aliceUser: UserEntity;
  let legacyId: string;

  const INSTRUCTION = 'Always include the dates of family events when I ask about history.';
  const PREFERENCE = 'I prefer short answers without long lists.';
  const ADVICE = 'Never give up on the orchard, Bob!';

  const importConversation = async (
    title: string,
    messages: { role: string; content: string; speaker?: string }[],
  ) => {
    const res = await t.gql(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      {
        input: {
          legacyId,
          title,
          messages: messages.map((m, i) => ({
            role: m.role,
            content: m.content,
            occurredAt: new Date(Date.UTC(2024, 2, 1, 10, i)).toISOString(),
            ...(m.speaker ? { metadata: { speaker: m.speaker } } : {}),
          })),
        },
      },
      alice,
    );
    expect(res.errors).toBeUndefined();
  };
  const search = (query: string, standing?: number) => {
    const service = t.app.get(HybridSearchService);
    const weights = {
      ...service.settings().weights,
      ...(standing === undefined ? {} : { standing }),
    };
    return service.search({
      user: aliceUser,
      legacyId,
      conversationId: null,
      query,
      clock: new Date('2024-06-01T12:00:00Z'),
      settings: { weights },
    });
  };

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    ds = t.app.get(DataSource);
    alice = await t.user('standing-alice');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandma Rose" }) { id } }',
      {},
      alice,
    );
    legacyId = created.data!.createLegacy.id;
    // With the agent: the member's turns, the agent's replies (no speaker's name).
    await importConversation('With the agent', [
      { role: 'USER', content: INSTRUCTION },
      { role: 'ASSISTANT', content: 'Understood, I will add the dates.' },
      { role: 'USER', content: PREFERENCE },
      { role: 'ASSISTANT', content: 'Noted, I will keep it brief.' },
      { role: 'USER', content: 'Rose baked plum cake every Sunday.' },
      { role: 'ASSISTANT', content: 'That sounds lovely.' },
      { role: 'USER', content: 'She kept bees behind the barn.' },
      { role: 'ASSISTANT', content: 'Bees need a lot of care.' },
      { role: 'USER', content: 'Her brother fixed tractors in the village.' },
      { role: 'ASSISTANT', content: 'A useful skill on a farm.' },
    ]);
    // Between two people, each under their name.
    await importConversation('Ann and Bob', [
      { role: 'USER', content: ADVICE, speaker: 'Ann' },
      { role: 'ASSISTANT', content: 'Thanks Ann, I will keep the trees.', speaker: 'Bob' },
    ]);
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
    [aliceUser] = await ds.query(`SELECT id, timezone FROM users WHERE subject = 'standing-alice'`);
  });

  afterAll(() => t.close());

  it('recognises instructions and preferences, not the same words told of oneself', async () => {
    const cases: [string, boolean][] = [
      ['Always include sources when I ask about history.', true],
      ['please always answer in French', true],
      ['Thanks! Never use jargon with me.', true],
      ['From now on, call me Sam.', true],
      ['Whenever I ask about recipes, list the ingredients first.', true],
      ["I'd prefer a balanced approach.", true],
      ['I would really prefer shorter replies', true],
      ['We always go camping in May.', false],
      ['I never met him.', false],
      ['She prefers tea.', false],
      ['Alwaysland is a theme park.', false],
    ];
    for (const [text, expected] of cases) {
      const [row] = await ds.query(`SELECT $1::text ~* $2::text AS matches`, [
        text,
        STANDING_PATTERN,
      ]);
      expect([text, row.matches]).toEqual([text, expected]);
    }
  });

  it('reads them from the partial index whose predicate is the pattern', async () => {
    const [index] = await ds.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'message_segments_standing_idx'`,
    );
    expect(index.indexdef).toContain(STANDING_PATTERN.replace(/'/g, "''"));
    // The planner proves the path's condition implies the index's predicate (or it could not
    // use the index at all): asked not to scan the table, it reads the partial index.
    const plan: { 'QUERY PLAN': string }[] = await ds.transaction(async (m) => {
      await m.query(`SET LOCAL enable_seqscan = off`);
      return m.query(
        `EXPLAIN SELECT x.id FROM message_segments x
          WHERE ${STANDING_TURN_SQL} AND x.legacy_id = $1 AND x.user_id = $2`,
        [legacyId, aliceUser.id],
      );
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('message_segments_standing_idx');
  });

  it('finds and raises the instruction for a request that shares no word with it', async () => {
    const query = 'Tell me about the old farm in the fifties';
    const raised = await search(query);
    const hit = raised.ranked.find((r) => r.text === INSTRUCTION)!;
    expect(hit.paths.standing).toBeDefined();
    expect(hit.paths.lexical).toBeUndefined();
    expect(hit.components.standing).toBe(1);
    expect(raised.hits.standing).toBe(2);

    const plain = await search(query, 0);
    expect(plain.hits.standing).toBe(0);
    // Every turn of so small a legacy is a dense candidate: unraised, it ranks lower.
    const same = plain.ranked.find((r) => r.text === INSTRUCTION)!;
    expect(hit.score).toBeCloseTo(same.score * 1.5, 6);
    const rank = (list: { text: string }[]) => list.findIndex((r) => r.text === INSTRUCTION);
    expect(rank(raised.ranked)).toBeLessThan(rank(plain.ranked));
  });

  it('answers recall over HTTP with the instruction among the first results', async () => {
    const res = await t.gql<{
      recall: { edges: { node: { sourceType: string; text: string } }[] };
    }>(
      `query($q: String!, $l: ID!) { recall(query: $q, legacyId: $l, first: 5) { edges { node { sourceType text } } } }`,
      { q: 'Tell me about the old farm in the fifties', l: legacyId },
      alice,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.recall.edges.map((e) => e.node).map((r) => r.text)).toContain(INSTRUCTION);
  });

  it('leaves advice said to a person in an imported dialogue alone', async () => {
    const outcome = await search('What should Bob do with the orchard?');
    const advice = outcome.ranked.find((r) => r.text === ADVICE)!;
    expect(advice).toBeDefined();
    expect(advice.paths.standing).toBeUndefined();
    expect(advice.components.standing).toBe(0);
  });
});
