import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { EmbeddingService } from '../../src/embeddings/embedding.service.js';
import type { UserEntity } from '../../src/identity/user.entity.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { HybridSearchService, SearchOutcome } from '../../src/search/hybrid-search.service.js';
import { CandidateRepository } from '../../src/search/candidate.repository.js';
import { SearchRepository } from '../../src/search/search.repository.js';
import { SearchRun } from '../../src/search/search-run.js';
import { SOURCE_KINDS } from '../../src/search/search.types.js';
import { SearchStatsRepository } from '../../src/search/search-stats.repository.js';
import { INDEX_JOB, SegmentIndexerService } from '../../src/search/segment-indexer.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { joinLegacy } from '../support/membership.js';

/**
 * Hybrid search on the embedded database: each path, the trigram fallback, time expressions,
 * identifiers and code chunks, widening and its limits, degradation, and the indexing job.
 */

const DAY = 86_400_000;
const CLOCK = new Date('2024-05-15T12:00:00Z'); // a Wednesday

interface Turn {
  role: 'USER' | 'ASSISTANT';
  content: string;
  occurredAt: Date;
  metadata?: Record<string, unknown>;
}

const CODE_TURN = [
  'Here is the helper that broke:',
  '',
  '```ts',
  'export function parseDate(input: string): Date {',
  '  return new Date(Date.parse(input));',
  '}',
  '```',
  '',
  'It returns an invalid date for empty strings.',
].join('\n');

function day(offset: number, hour = 10): Date {
  return new Date(CLOCK.getTime() + offset * DAY - (12 - hour) * 3_600_000);
}

describe('Hybrid search', () => {
  let t: TestApp;
  let ds: DataSource;
  let search: HybridSearchService;
  let alice: TestUser;
  let bob: TestUser;
  let aliceUser: UserEntity;
  let bobUser: UserEntity;
  let legacyId: string;
  /** Alice's older conversation, and the one she is in now. */
  let older: string;
  let current: string;
  let bobConversation: string;

  async function gql<T>(query: string, vars: Record<string, unknown>, as: TestUser): Promise<T> {
    const res = await t.gql<T>(query, vars, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  async function importTurns(as: TestUser, turns: Turn[], title: string): Promise<string> {
    const { importConversation } = await gql<{
      importConversation: { conversation: { id: string } };
    }>(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId,
          title,
          messages: turns.map((x) => ({ ...x, occurredAt: x.occurredAt.toISOString() })),
        },
      },
      as,
    );
    return importConversation.conversation.id;
  }

  async function userEntity(id: string): Promise<UserEntity> {
    const [row] = await ds.query(`SELECT id, timezone FROM users WHERE subject = $1`, [id]);
    return row as UserEntity;
  }

  const run = (
    query: string,
    over: Partial<Parameters<HybridSearchService['search']>[0]> = {},
  ): Promise<SearchOutcome> =>
    search.search({
      user: aliceUser,
      legacyId,
      conversationId: current,
      beforeTurn: 100,
      query,
      clock: CLOCK,
      ...over,
    });

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      SEARCH_KINDS: 'true',
    });
    ds = t.app.get(DataSource);
    search = t.app.get(HybridSearchService);
    alice = await t.user('search-alice', { email: 'alice@example.com' });
    bob = await t.user('search-bob', { email: 'bob@example.com' });
    await t.gql('{ me { id } }', {}, bob);
    const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      {},
      alice,
    );
    legacyId = createLegacy.id;
    await joinLegacy(t, alice, legacyId, bob);
    older = await importTurns(
      alice,
      [
        {
          role: 'USER',
          content: 'Grandpa Joe spent every summer fishing for walleye on Lake Erie.',
          occurredAt: day(-60),
        },
        {
          role: 'ASSISTANT',
          content: 'That sounds peaceful. Did he have a boat?',
          occurredAt: day(-60),
        },
        {
          role: 'USER',
          content: 'Yes, a green rowboat he named the Marigold.',
          occurredAt: day(-60),
        },
      ],
      'fishing',
    );
    current = await importTurns(
      alice,
      [
        {
          role: 'USER',
          content: 'He taught chemistry at Lincoln High for thirty years.',
          occurredAt: day(-20),
        },
        { role: 'ASSISTANT', content: 'What did his students think of him?', occurredAt: day(-20) },
        {
          role: 'USER',
          content: 'They called him Professor Fizz because of his experiments.',
          occurredAt: day(-20),
        },
        { role: 'USER', content: '奶奶的花园里有很多玫瑰和蜜蜂。', occurredAt: day(-8) },
        {
          role: 'USER',
          content: 'Last Tuesday we visited his old workshop together.',
          occurredAt: day(-8),
        },
        { role: 'USER', content: CODE_TURN, occurredAt: day(-3) },
        {
          role: 'USER',
          content: 'I scanned the photo of him at the science fair.',
          occurredAt: day(-2),
          metadata: {
            speaker: 'Alice',
            image_caption: 'a man holding a trophy next to a volcano model',
          },
        },
        {
          role: 'USER',
          content: 'He brought back a carved elephant from Zanzibar.',
          occurredAt: day(-1),
        },
      ],
      'school',
    );
    bobConversation = await importTurns(
      bob,
      [
        {
          role: 'USER',
          content: 'Grandpa Joe secretly hid his medals under the quokka floorboards.',
          occurredAt: day(-5),
        },
      ],
      'secrets',
    );
    await gql(
      'mutation($i: AddFactInput!) { addFact(input: $i) { id } }',
      {
        i: {
          legacyId,
          category: 'OTHER',
          content: 'Joe kept a quokka figurine on his desk.',
          visibility: 'PRIVATE',
        },
      },
      bob,
    );
    await gql(
      'mutation($i: AddFactInput!) { addFact(input: $i) { id } }',
      {
        i: {
          legacyId,
          category: 'HOBBY',
          content: 'Joe built ship models in bottles.',
          visibility: 'SHARED',
        },
      },
      bob,
    );
    await gql(
      'mutation($i: RememberThisInput!) { rememberThis(input: $i) { memory { id } } }',
      { i: { content: 'My quokka plush reminds me of Joe.', legacyId } },
      bob,
    );
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
    aliceUser = await userEntity('search-alice');
    bobUser = await userEntity('search-bob');
  });
  afterAll(() => t.close());

  describe('the indexing job', () => {
    it('stores each turn as segments with speaker, caption, context and a vector', async () => {
      const rows = await ds.query(
        `SELECT s.turn_index, s.position, s.is_code, s.language, s.speaker, s.caption, s.context,
                (SELECT count(*)::int FROM embeddings e WHERE e.kind = 'segment' AND e.item_id = s.id) AS vectors
           FROM message_segments s WHERE s.conversation_id = $1 ORDER BY turn_index, position`,
        [current],
      );
      expect(rows.filter((r: { vectors: number }) => r.vectors !== 1)).toEqual([]);
      expect(rows.filter((r: { turn_index: number }) => r.turn_index === 5)).toEqual([
        expect.objectContaining({ position: 0, is_code: false }),
        expect.objectContaining({ position: 1, is_code: true, language: 'ts' }),
        expect.objectContaining({ position: 2, is_code: false }),
      ]);
      expect(rows.find((r: { turn_index: number }) => r.turn_index === 6)).toMatchObject({
        speaker: 'Alice',
        caption: 'a man holding a trophy next to a volcano model',
      });
      expect(rows.find((r: { turn_index: number }) => r.turn_index === 1).context).toBe(
        'He taught chemistry at Lincoln High for thirty years.',
      );
    });

    it('running twice changes nothing the second time', async () => {
      const snapshot = async () => ({
        segments: await ds.query(
          `SELECT id, message_id, position FROM message_segments ORDER BY id`,
        ),
        terms: await ds.query(`SELECT * FROM search_term_stats ORDER BY conversation_id, lexeme`),
        docs: await ds.query(`SELECT * FROM search_doc_stats ORDER BY conversation_id`),
        vectors: await ds.query(`SELECT count(*)::int AS n FROM embeddings WHERE kind = 'segment'`),
      });
      const before = await snapshot();
      const jobs = t.app.get(JobsService);
      await jobs.runHandler(INDEX_JOB, { conversationId: current });
      await jobs.runHandler(INDEX_JOB, { conversationId: current });
      expect(await t.app.get(SegmentIndexerService).indexConversation(current)).toBe(0);
      expect(await snapshot()).toEqual(before);
    });

    it('keeps full-text statistics equal to the segments', async () => {
      const [{ n }] = await ds.query(
        `SELECT count(*)::int AS n FROM message_segments WHERE conversation_id = $1`,
        [current],
      );
      const [stats] = await ds.query(
        `SELECT segments FROM search_doc_stats WHERE conversation_id = $1`,
        [current],
      );
      expect(stats.segments).toBe(n);
      const [{ df }] = await ds.query(
        `SELECT df FROM search_term_stats WHERE conversation_id = $1 AND lexeme = 'chemistri'`,
        [current],
      );
      expect(df).toBe(2); // the turn and, as its context, the next one
    });
  });

  describe('paths', () => {
    it('dense: finds a turn by meaning with no word in common', async () => {
      // ("science" would now match: chemistry is a science, among the turn's kinds.)
      const outcome = await run('He was an educator');
      // The reply that follows it is indexed with it as context, so it ranks close by.
      const top = outcome.ranked.slice(0, 2).find((r) => r.text.includes('chemistry at Lincoln'));
      expect(top).toBeDefined();
      expect(top!.paths.dense!.score).toBeGreaterThan(0.3);
      expect(top!.paths.lexical).toBeUndefined();
    });

    it('lexical: a rare word ranks its turn first, with its BM25 rank and coverage', async () => {
      const outcome = await run('chemistry');
      const top = outcome.ranked[0];
      expect(top.text).toContain('chemistry at Lincoln High');
      expect(top.paths.lexical).toMatchObject({ score: 1, rank: 1 });
      expect(top.paths.lexical!.raw).toBeGreaterThan(0);
      expect(top.coverage).toBe(1);
      // The next turn holds the word only as context: a lower rank, and a partial coverage.
      const next = outcome.ranked.find((r) => r.text.startsWith('What did his students'))!;
      expect(next.paths.lexical!.score).toBeLessThan(0.5);
      expect(next.coverage).toBeCloseTo(0.2, 5);
      expect(outcome.fallback).toBe(false);
    });

    it('lexical: pre-ranking, used when many turns hold a selecting word, keeps the BM25 scores', async () => {
      const repo = t.app.get(SearchRepository);
      const scope = { legacyId, userId: aliceUser.id, conversationId: current, beforeTurn: null };
      const words = "'grandpa' | 'joe' | 'walley' | 'chemistri' | 'photo'";
      const q = {
        english: words,
        englishAll: words,
        englishEvery: words.replaceAll('|', '&'),
        selectedTurns: 10,
        scopeTurns: 100,
        simple: '',
        keywords: '',
        lexemes: ['grandpa', 'joe', 'walley', 'chemistri', 'photo'],
        idf: [1, 0.5, 2, 2, 1.5],
        avgLength: 10,
      };
      const bm25 = { k1: 1.2, b: 0.75, contextWeight: 0.3, kindWeight: 0.5 };
      const exact = await repo.lexicalSegments('all', scope, q, bm25, 10);
      const preranked = await repo.lexicalSegments(
        'all',
        scope,
        { ...q, selectedTurns: 1_000_000 },
        bm25,
        10,
      );
      expect(exact.length).toBeGreaterThanOrEqual(4);
      expect(preranked).toEqual(exact);
    });

    it('lexical: the current conversation read turn by turn scores as through the full-text index', async () => {
      const repo = t.app.get(SearchRepository);
      const scope = { legacyId, userId: aliceUser.id, conversationId: current, beforeTurn: 100 };
      const words = "'chemistri' | 'photo' | 'zanzibar' | 'scienc'";
      const q = {
        english: words,
        englishAll: words,
        englishEvery: words.replaceAll('|', '&'),
        selectedTurns: 10,
        scopeTurns: 8,
        simple: '',
        keywords: '',
        lexemes: ['chemistri', 'photo', 'zanzibar', 'scienc'],
        idf: [2, 1.5, 2, 1],
        avgLength: 10,
      };
      const bm25 = { k1: 1.2, b: 0.75, contextWeight: 0.3, kindWeight: 0.5 };
      const byTurn = await repo.lexicalSegments('current', scope, q, bm25, 10);
      const byIndex = await repo.lexicalSegments(
        'current',
        scope,
        { ...q, scopeTurns: 1_000_000 },
        bm25,
        10,
      );
      expect(byTurn.length).toBeGreaterThanOrEqual(3);
      expect(byTurn).toEqual(byIndex);
    });

    it('lexical: pre-ranking takes the turns holding every query word first, the others only to fill its cut', async () => {
      // A family of its own, so the other tests' turns stay as they are.
      const carol = await t.user('search-carol');
      const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Lou" }) { id } }',
        {},
        carol,
      );
      const turns = [
        'Grandpa was a carpenter.',
        // "grandpa" as context, "boat" in the turn: the one turn holding both words.
        'He built a boat once.',
        'It took all summer.',
        // "boat" four times: what ts_rank over the query words ranks first.
        'Boat after boat, boat after boat: he never tired of them.',
      ];
      await gql(
        `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
        {
          input: {
            legacyId: createLegacy.id,
            messages: turns.map((content) => ({ role: 'USER', content, occurredAt: day(-4) })),
          },
        },
        carol,
      );
      await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
      const carolUser = await userEntity('search-carol');
      const repo = t.app.get(SearchRepository);
      const scope = {
        legacyId: createLegacy.id,
        userId: carolUser.id,
        conversationId: null,
        beforeTurn: null,
      };
      const q = {
        english: "'grandpa' | 'boat'",
        englishAll: "'grandpa' | 'boat'",
        englishEvery: "'grandpa' & 'boat'",
        selectedTurns: 1_000_000,
        scopeTurns: 100,
        simple: '',
        keywords: '',
        lexemes: ['grandpa', 'boat'],
        idf: [1.5, 1],
        avgLength: 5,
      };
      const bm25 = { k1: 1.2, b: 0.75, contextWeight: 0.3, kindWeight: 0.5 };
      const scored = await repo.lexicalSegments(
        'all',
        scope,
        { ...q, selectedTurns: 10 },
        bm25,
        10,
      );
      expect(scored).toHaveLength(4);
      const idOf = async (content: string) =>
        (
          (await ds.query(`SELECT id FROM message_segments WHERE content = $1`, [content])) as {
            id: string;
          }[]
        )[0].id;
      const both = await idOf(turns[1]);
      const repeated = await idOf(turns[3]);
      // A cut of one: the turn holding both words, with its BM25 score; not the turn ts_rank
      // puts first, which holds one of them.
      const one = await repo.lexicalSegments('all', scope, q, bm25, 10, { preranked: 1 });
      expect(one).toEqual(scored.filter((r) => r.id === both));
      // A cut of two: that turn, then the best of the others by pre-ranking.
      const two = await repo.lexicalSegments('all', scope, q, bm25, 10, { preranked: 2 });
      expect(two.map((r) => r.id).sort()).toEqual([both, repeated].sort());
      for (const row of two) expect(scored).toContainEqual(row);
    });

    it('trigram fallback: a misspelt name and Chinese text', async () => {
      const typo = await run('Zanzibr elefant', { settings: { minGoodHits: 0 } });
      expect(typo.fallback).toBe(true);
      expect(typo.hits.trigram).toBeGreaterThan(0);
      const hit = typo.ranked.find((r) => r.paths.trigram);
      expect(hit!.text).toContain('Zanzibar');

      const chinese = await run('奶奶的花园', { settings: { minGoodHits: 0 } });
      expect(chinese.fallback).toBe(true);
      const top = chinese.ranked.find((r) => r.paths.trigram)!;
      expect(top.text).toContain('奶奶的花园');
      expect(top.components.trigram).toBe(1);
    });

    it('time: "last week" relative to the conversation clock boosts what was said then', async () => {
      const outcome = await run('What did we do last week?');
      expect(outcome.features.timeRange!.expression).toBe('last week');
      expect(outcome.hits.time).toBeGreaterThan(0);
      const inWeek = outcome.ranked.filter((r) => r.components.time === 1).map((r) => r.text);
      expect(inWeek).toEqual(
        expect.arrayContaining(['Last Tuesday we visited his old workshop together.']),
      );
      const top = outcome.ranked.find((r) => r.kind === 'segment')!;
      expect(top.components.time).toBe(1);
    });

    it('time filter keeps only the period, unless nothing was said then', async () => {
      const filtered = await run('What did we do last week?', { settings: { time: 'filter' } });
      expect(filtered.timeFiltered).toBe(true);
      expect(filtered.ranked.every((r) => r.components.time === 1)).toBe(true);
      const empty = await run('What happened on 2020-02-02?', { settings: { time: 'filter' } });
      expect(empty.timeFiltered).toBe(false);
      expect(empty.ranked.length).toBeGreaterThan(0);
    });

    it('time off: no time path and no boost', async () => {
      const outcome = await run('What did we do last week?', { settings: { time: 'off' } });
      expect(outcome.hits.time).toBe(0);
      for (const r of outcome.ranked) {
        const c = r.components;
        expect(c.time).toBe(0);
        // The default weights, with no time factor anywhere.
        const expected =
          (c.base + 0.3 * c.neighbor) *
          (1 + 0.3 * c.speaker) *
          (1 - 0.2 * c.question) *
          (1 - 0.3 * c.agent) *
          (r.kind === 'summary' ? 0.5 : 1);
        expect(r.score).toBeCloseTo(expected, 12);
      }
    });

    it('identifiers and code: the code chunk comes first for a code question', async () => {
      const outcome = await run('Why does parseDate fail?');
      expect(outcome.features).toMatchObject({ identifiers: ['parseDate'], code: true });
      const top = outcome.ranked[0];
      expect(top.isCode).toBe(true);
      expect(top.text).toContain('export function parseDate');
      expect(top.components.identifier).toBe(1);
      expect(top.components.code).toBe(0.5);
    });
  });

  describe('scope', () => {
    it('widens to other conversations, memories and facts when the current one has too few good hits', async () => {
      const outcome = await run('walleye rowboat Marigold');
      expect(outcome.widened).toBe(true);
      expect(outcome.widenReason).toBe('few_good_hits');
      const top = outcome.ranked[0];
      expect(top).toMatchObject({ scope: 'wider', conversationId: older });
    });

    it('does not widen when the current conversation answers', async () => {
      const outcome = await run(
        'chemistry teacher Lincoln High students Professor Fizz experiments',
        {
          settings: { minGoodHits: 2 },
        },
      );
      expect(outcome.goodHits).toBeGreaterThanOrEqual(2);
      expect(outcome.widened).toBe(false);
      expect(outcome.ranked.every((r) => r.scope === 'current')).toBe(true);
    });

    it.each(['Like last time, tell me about chemistry class', '我们上次聊过 chemistry'])(
      'widens when the message refers back: %s',
      async (query) => {
        const outcome = await run(query, { settings: { minGoodHits: 0 } });
        expect(outcome.widened).toBe(true);
        expect(outcome.widenReason).toBe('refers_back');
      },
    );

    it('searches the two scopes of a message that refers back side by side, as one after the other', async () => {
      const query = 'Like last time, tell me about Grandpa Joe and the chemistry class';
      const settings = search.settings();
      const features = search.features(query, CLOCK, aliceUser.timezone);
      const vector = await t.app.get(EmbeddingService).embedQuery(query);
      const scope = { userId: aliceUser.id, legacyId, conversationId: current, beforeTurn: 100 };
      const newRun = () =>
        new SearchRun(
          t.app.get(SearchRepository),
          t.app.get(SearchStatsRepository),
          t.app.get(CandidateRepository),
          settings,
          features,
          scope,
        );
      const apart = newRun();
      await apart.prepareLexical(true);
      await apart.searchScope('current', ['segment', 'summary'], vector);
      const currentAlone = apart.rank();
      await apart.searchScope('wider', SOURCE_KINDS, vector);
      const together = newRun();
      await together.prepareLexical(true);
      await together.searchScopes(
        [
          ['current', ['segment', 'summary']],
          ['wider', SOURCE_KINDS],
        ],
        vector,
      );
      expect(together.rank(1)).toEqual(currentAlone);
      expect(together.rank()).toEqual(apart.rank());
      expect(together.rank().some((r) => r.scope === 'wider')).toBe(true);
      expect(together.hits).toEqual(apart.hits);
      expect(together.failedStage).toBeNull();
    });

    it("never reaches another member's turns, memories or private facts; shared facts yes", async () => {
      for (const outcome of [
        await run('quokka medals floorboards ship models bottles', {
          settings: { minGoodHits: 99 },
        }),
        await search.search({
          user: aliceUser,
          legacyId,
          conversationId: null,
          query: 'quokka medals floorboards ship models bottles',
          clock: CLOCK,
        }),
      ]) {
        expect(outcome.widened || outcome.widenReason === 'recall').toBe(true);
        const texts = outcome.ranked.map((r) => r.text).join(' | ');
        expect(texts).not.toMatch(/quokka|medals/i);
        expect(outcome.ranked.filter((r) => r.kind === 'fact').map((r) => r.text)).toEqual([
          'Joe built ship models in bottles.',
        ]);
        expect(outcome.ranked.some((r) => r.conversationId === bobConversation)).toBe(false);
        expect(outcome.ranked.filter((r) => r.kind === 'memory')).toEqual([]);
      }
    });

    it("bob's own search finds his turn, memory and private fact", async () => {
      const outcome = await search.search({
        user: bobUser,
        legacyId,
        conversationId: null,
        query: 'quokka',
        clock: CLOCK,
      });
      expect(new Set(outcome.ranked.map((r) => r.kind))).toEqual(
        new Set(['segment', 'fact', 'memory']),
      );
    });
  });

  describe('switches and degradation', () => {
    it('hybrid off: vector search only', async () => {
      const outcome = await run('zanzibar', { settings: { hybrid: false } });
      expect(outcome.hits.lexical).toBe(0);
      expect(outcome.hits.trigram).toBe(0);
      expect(outcome.hits.dense).toBeGreaterThan(0);
      expect(outcome.ranked.every((r) => r.components.lexical === 0)).toBe(true);
    });

    it('rrf fusion: scores are sums of weight / (k + rank)', async () => {
      const outcome = await run('carved elephant from Zanzibar', { settings: { fusion: 'rrf' } });
      const top = outcome.ranked[0];
      expect(top.text).toContain('Zanzibar');
      expect(top.components.rrf).toBeGreaterThan(0);
      expect(top.components.rrf).toBeLessThanOrEqual((0.7 + 0.3 + 0.25) / 61);
      expect(top.components.base).toBe(top.components.rrf);
    });

    it('weights: with the dense weight at 0, vector similarity does not count', async () => {
      const outcome = await run('zanzibar', {
        settings: {
          weights: {
            dense: 0,
            lexical: 1,
            identifier: 0,
            time: 0,
            neighbor: 0,
            summary: 1,
            speaker: 0,
            standing: 0,
          },
          questionPenalty: 0,
          agentPenalty: 0,
        },
      });
      for (const r of outcome.ranked)
        expect(r.score).toBeCloseTo(Math.max(r.components.lexical, r.components.trigram), 10);
    });

    it('embedding model down: lexical only, recorded as degraded', async () => {
      const spy = jest.spyOn(t.app.get(EmbeddingService), 'embedQuery').mockResolvedValue(null);
      try {
        const outcome = await run('zanzibar', { settings: { hybrid: false } });
        expect(outcome.degraded).toEqual(['dense']);
        expect(outcome.hits.dense).toBe(0);
        expect(outcome.ranked[0].text).toContain('Zanzibar');
      } finally {
        spy.mockRestore();
      }
    });

    it('full-text search failing: dense only, recorded with the failing stage', async () => {
      const spy = jest
        .spyOn(t.app.get(SearchStatsRepository), 'lexemeStats')
        .mockRejectedValue(new Error('text search configuration is missing'));
      try {
        const outcome = await run('a wooden elephant souvenir brought home from Africa');
        expect(outcome.degraded).toEqual(['lexical']);
        expect(outcome.failedStage).toBe('lexical');
        expect(outcome.hits.lexical).toBe(0);
        expect(outcome.ranked[0].text).toContain('Zanzibar');
      } finally {
        spy.mockRestore();
      }
    });

    it('both down: no crash, an empty result apart from time and nothing recorded as found', async () => {
      const embed = jest.spyOn(t.app.get(EmbeddingService), 'embedQuery').mockResolvedValue(null);
      const lex = jest
        .spyOn(t.app.get(SearchStatsRepository), 'lexemeStats')
        .mockRejectedValue(new Error('down'));
      try {
        const outcome = await run('zanzibar');
        expect(outcome.degraded.sort()).toEqual(['dense', 'lexical']);
        expect(outcome.ranked).toEqual([]);
      } finally {
        embed.mockRestore();
        lex.mockRestore();
      }
    });
  });
});
