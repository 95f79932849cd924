import { DataSource } from 'typeorm';
import type { UserEntity } from '../../src/identity/user.entity.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { HybridSearchService } from '../../src/search/hybrid-search.service.js';
import { SegmentIndexerService } from '../../src/search/segment-indexer.service.js';
import { KINDS_VERSION } from '../../src/search/word-kinds.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * What the things a turn names are kinds of (WordNet) is stored with its segments and found by
 * a question asked with the kind; segments stored before kinds existed are read by an
 * idempotent background job that also brings the full-text statistics up to date.
 */
describe('Kinds of what a turn names', () => {
  let t: TestApp;
  let ds: DataSource;
  let alice: TestUser;
  let aliceUser: UserEntity;
  let legacyId: string;

  const segments = (): Promise<{ content: string; kinds: string | null }[]> =>
    ds.query(
      `SELECT content, kinds FROM message_segments WHERE legacy_id = $1 ORDER BY turn_index`,
      [legacyId],
    );
  const stats = (): Promise<{ lexeme: string; df: number }[]> =>
    ds.query(
      `SELECT t.lexeme, t.df FROM search_term_stats t
         JOIN conversations c ON c.id = t.conversation_id
        WHERE c.legacy_id = $1 AND t.df > 0 ORDER BY t.lexeme`,
      [legacyId],
    );
  /** The legacy's full-text statistics counted again from `words` (a tsvector of segment s). */
  const recountStats = async (words: string) => {
    await ds.query(
      `DELETE FROM search_term_stats t USING conversations c
        WHERE c.id = t.conversation_id AND c.legacy_id = $1`,
      [legacyId],
    );
    await ds.query(
      `INSERT INTO search_term_stats (conversation_id, lexeme, df)
       SELECT s.conversation_id, u.lexeme, count(*)::int
         FROM message_segments s CROSS JOIN LATERAL unnest(${words}) AS u
        WHERE s.legacy_id = $1 GROUP BY s.conversation_id, u.lexeme`,
      [legacyId],
    );
  };
  const search = (query: string) =>
    t.app.get(HybridSearchService).search({
      user: aliceUser,
      legacyId,
      conversationId: null,
      query,
      clock: new Date('2024-06-01T12:00:00Z'),
    });

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      SEARCH_KINDS: 'true',
    });
    ds = t.app.get(DataSource);
    alice = await t.user('kinds-alice');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Uncle John" }) { id } }',
      {},
      alice,
    );
    legacyId = created.data!.createLegacy.id;
    const messages = [
      'He started taekwondo when he was forty.',
      'Rome was his favourite trip, he went back three times.',
      'He cooked pasta every Sunday for the whole family.',
      '```\nconst city = new Rome();\n```',
      'A trip to Rome sounds wonderful; the Colosseum is worth a visit.',
    ].map((content, i) => ({
      // The last is the agent's reply.
      role: i === 4 ? 'ASSISTANT' : 'USER',
      content,
      occurredAt: new Date(Date.UTC(2024, 4, 1 + i)).toISOString(),
    }));
    const imported = await t.gql(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      { input: { legacyId, title: 'John', messages } },
      alice,
    );
    expect(imported.errors).toBeUndefined();
    await t.app.get(JobsService).drain({ timeoutMs: 180_000 });
    [aliceUser] = await ds.query(`SELECT id, timezone FROM users WHERE subject = 'kinds-alice'`);
    // Indexing waits for WordNet, read once per process: over a minute beside a busy suite.
  }, 240_000);

  afterAll(() => t.close());

  it("stores the kinds of what each turn names, none for code or the agent's replies", async () => {
    const rows = await segments();
    expect(rows[0].kinds).toContain('martial art');
    expect(rows[1].kinds).toContain('city');
    expect(rows[3].kinds).toBeNull();
    expect(rows[4].content).toContain('Colosseum');
    expect(rows[4].kinds).toBeNull();
    const versions: { version: number }[] = await ds.query(
      `SELECT DISTINCT kinds_version AS version FROM message_segments WHERE legacy_id = $1`,
      [legacyId],
    );
    expect(versions).toEqual([{ version: KINDS_VERSION }]);
  });

  it('finds the turn for a question asked with the kind, by its words alone', async () => {
    const arts = await search('What martial arts did John do?');
    const top = arts.ranked.find((r) => r.paths.lexical)!;
    expect(top.text).toContain('taekwondo');

    const cities = await search('Which cities did he visit?');
    const hit = cities.ranked.find((r) => r.text.startsWith('Rome was'))!;
    expect(hit.paths.lexical).toBeDefined();
    // The kinds count below the turn's own words: "city" in the code scores higher.
    const code = cities.ranked.find((r) => r.text.includes('new Rome'))!;
    expect(code.paths.lexical!.raw!).toBeGreaterThan(hit.paths.lexical!.raw!);
  });

  it('answers recall over HTTP with the turn that names the kind asked for', async () => {
    const res = await t.gql<{
      recall: { edges: { node: { sourceType: string; text: string } }[] };
    }>(
      `query($q: String!, $l: ID!) { recall(query: $q, legacyId: $l, first: 3) { edges { node { sourceType text } } } }`,
      { q: 'What martial arts did John do?', l: legacyId },
      alice,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.recall.edges.map((e) => e.node)[0].text).toContain('taekwondo');
  });

  it('reads segments stored before kinds existed, once, and counts their words', async () => {
    const before = await segments();
    const beforeStats = await stats();
    // As the migration leaves them: no kinds, and statistics that never counted them.
    await ds.query(
      `UPDATE message_segments SET kinds = NULL, kinds_version = NULL WHERE legacy_id = $1`,
      [legacyId],
    );
    await recountStats('s.search_tsv');
    expect((await stats()).find((s) => s.lexeme === 'martial')).toBeUndefined();

    const indexer = t.app.get(SegmentIndexerService);
    expect(await indexer.readKinds()).toBe(before.length);
    expect(await segments()).toEqual(before);
    expect(await stats()).toEqual(beforeStats);
    // A second run finds nothing to read and changes nothing.
    expect(await indexer.readKinds()).toBe(0);
    expect(await segments()).toEqual(before);
    expect(await stats()).toEqual(beforeStats);
  });

  it('reads again the segments read by older rules, and nets the statistics', async () => {
    const before = await segments();
    const beforeStats = await stats();
    // As older rules might have left them: other kinds, counted in the statistics.
    await ds.query(
      `UPDATE message_segments SET kinds = 'obsolete gadget', kinds_version = $2
        WHERE legacy_id = $1`,
      [legacyId, KINDS_VERSION - 1],
    );
    await recountStats('s.search_tsv || s.kinds_tsv');
    expect((await stats()).find((s) => s.lexeme === 'obsolet')).toEqual({
      lexeme: 'obsolet',
      df: before.length,
    });

    const indexer = t.app.get(SegmentIndexerService);
    expect(await indexer.readKinds()).toBe(before.length);
    expect(await segments()).toEqual(before);
    // The old kinds' words are gone from the counts, the new ones' counted once.
    expect(await stats()).toEqual(beforeStats);
    expect(await indexer.readKinds()).toBe(0);
    expect(await stats()).toEqual(beforeStats);
  });
});

describe('Kinds switched off (SEARCH_KINDS=false)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
  });

  afterAll(() => t.close());

  it('indexes turns without kinds, left for the job to read once switched on', async () => {
    const alice = await t.user('kinds-off-alice');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Aunt May" }) { id } }',
      {},
      alice,
    );
    const legacyId = created.data!.createLegacy.id;
    const imported = await t.gql(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      {
        input: {
          legacyId,
          title: 'May',
          messages: [
            {
              role: 'USER',
              content: 'She started taekwondo at sixty.',
              occurredAt: '2024-05-01T10:00:00Z',
            },
          ],
        },
      },
      alice,
    );
    expect(imported.errors).toBeUndefined();
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
    const rows: { kinds: string | null; version: number | null }[] = await t.app
      .get(DataSource)
      .query(`SELECT kinds, kinds_version AS version FROM message_segments WHERE legacy_id = $1`, [
        legacyId,
      ]);
    expect(rows).toEqual([{ kinds: null, version: null }]);
    expect(await t.app.get(SegmentIndexerService).readKinds()).toBe(0);
  });
});
