import { activeInLegacySql } from '../facts/fact-visibility.js';
import { activeMemoryScopeSql } from '../memories/memory-scope.js';
import { storyPassageScopeSql } from '../stories/story-visibility.js';
import { chunkReadableSql, segmentReadableSql } from '../conversations/withheld-reply.js';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { denseTerms, similarityOf, vectorText, widenHnswScan } from '../embeddings/vector-sql.js';
import type { QueryVector } from '../embeddings/embedding.service.js';
import type { SourceKind } from './search.types.js';
import { SqlParams, likeEscape } from '../database/sql-params.js';
import { SAID_TO_PERSON_SQL, STANDING_TURN_SQL } from './standing.js';

/** Who is searching and where: every query is scoped in SQL by these. */
export interface ScopeParams {
  userId: string;
  legacyId: string;
  /** The current conversation (null for recall, which searches the whole legacy). */
  conversationId: string | null;
  /** Turns of the current conversation from this index on are in the prompt already. */
  beforeTurn: number | null;
}

/** Where to look: the current conversation, everything else of the user in the legacy, or all. */
export type ScopeName = 'current' | 'wider' | 'all';

export interface LexicalQuery {
  /** A tsquery of the turn lexemes a turn must hold one of to be scored (english, ORed). */
  english: string;
  /** Every turn lexeme of the query, ORed (what pre-ranking counts). */
  englishAll: string;
  /** Every turn lexeme of the query, ANDed: the turns pre-ranking takes first. */
  englishEvery: string;
  /** At most this many turns hold a selecting lexeme (the sum of their frequencies). */
  selectedTurns: number;
  /** How many turns the scope holds. */
  scopeTurns: number;
  /** The same for the simple configuration (summaries, facts, memories), stop words removed. */
  simple: string;
  /** Those keywords, space-separated (for coverage). */
  keywords: string;
  /** Turn lexemes with their inverse document frequency in this scope. */
  lexemes: string[];
  idf: number[];
  /** Mean BM25 document length in this scope. */
  avgLength: number;
}

export interface Bm25Settings {
  k1: number;
  b: number;
  contextWeight: number;
  kindWeight: number;
}

export interface PathRow {
  id: string;
  score: number;
  coverage?: number;
}

interface KindSql {
  table: string;
  /** Scope predicate over alias `x`. */
  scope: (scope: ScopeName, s: ScopeParams, p: SqlParams) => string;
  /** When the item was said or made, for the time path. */
  timeFrom: string;
  timeTo: string;
  /** The period the item tells of, if it has one (segments), also for the time path. */
  told?: { from: string; to: string };
}

/** Up to this many turns holding a selecting word, BM25 scores them all. */
const BM25_SCORE_ALL_MAX = 1500;
/** Past it, BM25 scores this many, pre-ranked by ts_rank. */
export const BM25_PRERANKED = 500;
/**
 * A conversation of up to this many turns is searched turn by turn (its words checked on each)
 * rather than through the full-text index, whose lists of a common word span every
 * conversation of every family.
 */
const CONVERSATION_SCAN_MAX = 4000;

const SEGMENT_SCOPE = (scope: ScopeName, s: ScopeParams, p: SqlParams): string => {
  if (scope === 'current') {
    const before = s.beforeTurn === null ? '' : ` AND x.turn_index < ${p.add(s.beforeTurn)}`;
    // Another participant's turns, but not an agent's turn made for them alone.
    return `x.conversation_id = ${p.add(s.conversationId)}${before}
      AND ${segmentReadableSql('x', p.add(s.userId))}`;
  }
  const owner = `x.legacy_id = ${p.add(s.legacyId)} AND x.user_id = ${p.add(s.userId)}`;
  return scope === 'wider' && s.conversationId
    ? `${owner} AND x.conversation_id <> ${p.add(s.conversationId)}`
    : owner;
};

const KINDS: Record<SourceKind, KindSql> = {
  segment: {
    table: 'message_segments',
    scope: SEGMENT_SCOPE,
    timeFrom: 'x.occurred_at',
    timeTo: 'x.occurred_at',
    told: { from: 'x.told_from', to: 'x.told_to' },
  },
  summary: {
    table: 'conversation_chunks',
    scope: (scope, s, p) => {
      if (scope === 'current') {
        const before = s.beforeTurn === null ? '' : ` AND x.range_start < ${p.add(s.beforeTurn)}`;
        // Not one that covers a reply made for another participant alone.
        return `x.conversation_id = ${p.add(s.conversationId)}${before}
          AND ${chunkReadableSql('x', p.add(s.userId))}`;
      }
      const owner = `x.legacy_id = ${p.add(s.legacyId)} AND x.user_id = ${p.add(s.userId)}`;
      return scope === 'wider' && s.conversationId
        ? `${owner} AND x.conversation_id <> ${p.add(s.conversationId)}`
        : owner;
    },
    timeFrom: 'x.first_occurred_at',
    timeTo: 'x.last_occurred_at',
  },
  // The legacy's facts active as the user sees them (facts/fact-visibility.ts).
  fact: {
    table: 'facts',
    scope: (_scope, s, p) => activeInLegacySql('x', p.add(s.legacyId), p.add(s.userId)),
    timeFrom: 'x.created_at',
    timeTo: 'x.created_at',
  },
  // Passages of the legacy's stories the user may see (stories/story-visibility.ts).
  story: {
    table: 'story_chunks',
    scope: (_scope, s, p) => storyPassageScopeSql('x', p.add(s.legacyId), p.add(s.userId)),
    timeFrom: 'x.created_at',
    timeTo: 'x.created_at',
  },
  // The user's own active memories, about this legacy or about no legacy in particular
  // (memories/memory-scope.ts).
  memory: {
    table: 'memories',
    scope: (_scope, s, p) => activeMemoryScopeSql('x', p.add(s.userId), p.add(s.legacyId)),
    timeFrom: 'x.created_at',
    timeTo: 'x.created_at',
  },
};

/**
 * The search paths' SQL. Each query is scoped in SQL to what the user may see: their own
 * conversations' turns and summaries, their own memories, and the legacy's facts that are
 * theirs or shared. Nothing is filtered afterwards in memory.
 */
@Injectable()
export class SearchRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Nearest neighbours for several kinds and one scope in one transaction, with the HNSW
   * settings filtered searches need: iterative scans keep going until enough rows pass the
   * scope (pgvector 0.8), and ef_search covers the number of candidates asked for.
   */
  async denseMany(
    kinds: SourceKind[],
    scope: ScopeName,
    s: ScopeParams,
    q: QueryVector,
    limit: number,
  ): Promise<Map<SourceKind, PathRow[]>> {
    return this.dataSource.transaction(async (m) => {
      await widenHnswScan(m, limit);
      const out = new Map<SourceKind, PathRow[]>();
      for (const kind of kinds) out.set(kind, await this.dense(m, kind, scope, s, q, limit));
      return out;
    });
  }

  /**
   * Cosine similarity of given items (found by another path), so that fusion compares every
   * candidate on every path rather than treating "not in the top N" as zero.
   */
  async denseFor(kind: SourceKind, ids: string[], q: QueryVector): Promise<PathRow[]> {
    if (ids.length === 0) return [];
    const p = new SqlParams();
    const { filter, distance } = denseTerms(q, kind, p.add(vectorText(q.vector)));
    const rows: { id: string; distance: number }[] = await this.dataSource.query(
      `SELECT e.item_id AS id, ${distance} AS distance FROM embeddings e
        WHERE ${filter} AND e.item_id = ANY(${p.add(ids)}::uuid[])`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: similarityOf(q.model, Number(r.distance)) }));
  }

  /** Nearest items by cosine similarity (HNSW), within the scope. */
  private async dense(
    m: EntityManager,
    kind: SourceKind,
    scope: ScopeName,
    s: ScopeParams,
    q: QueryVector,
    limit: number,
  ): Promise<PathRow[]> {
    const sql = KINDS[kind];
    const p = new SqlParams();
    const vector = p.add(vectorText(q.vector));
    const { filter, distance } = denseTerms(q, kind, vector);
    if (scope === 'current') {
      // One conversation's items are few: score each by its vector, looked up by primary key.
      // Joined the other way the planner scanned every vector of the kind (19 ms against 5 ms
      // at 100,000 turns on a server), as its default costs expect a disk, not a cache.
      const where = sql.scope(scope, s, p);
      const exact: { id: string; distance: number }[] = await m.query(
        `SELECT x.id, d.distance FROM ${sql.table} x
           CROSS JOIN LATERAL (
             SELECT ${distance} AS distance FROM embeddings e
              WHERE ${filter} AND e.item_id = x.id) d
          WHERE ${where}
          ORDER BY d.distance
          LIMIT ${p.add(limit)}`,
        p.values,
      );
      return exact.map((r) => ({ id: r.id, score: similarityOf(q.model, Number(r.distance)) }));
    }
    // Vector rows carry their legacy (and turns their owner), which lets the index scan filter
    // early: nearest rows of other families are skipped before the join, not after.
    const owner =
      kind === 'segment'
        ? ` AND e.legacy_id = ${p.add(s.legacyId)} AND e.user_id = ${p.add(s.userId)}`
        : kind === 'story' || kind === 'fact'
          ? ` AND e.legacy_id = ${p.add(s.legacyId)}`
          : '';
    const where = sql.scope(scope, s, p);
    const rows: { id: string; distance: number }[] = await m.query(
      `SELECT x.id, ${distance} AS distance
         FROM embeddings e JOIN ${sql.table} x ON x.id = e.item_id
        WHERE ${filter}${owner} AND ${where}
        ORDER BY ${distance}
        LIMIT ${p.add(limit)}`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: similarityOf(q.model, Number(r.distance)) }));
  }

  /**
   * Full-text hits on turns ranked by BM25 over the turn's words and, at a lower weight, the
   * preceding turn's: document frequencies come from the scope's statistics. `coverage` is the
   * share of the query's rarity (idf) the turn holds.
   */
  async lexicalSegments(
    scope: ScopeName,
    s: ScopeParams,
    q: LexicalQuery,
    bm25: Bm25Settings,
    limit: number,
    options: {
      /** Only these segments (scores for candidates another path found). */
      ids?: string[];
      /** How many turns pre-ranking keeps (BM25_PRERANKED, or five times the limit). */
      preranked?: number;
    } = {},
  ): Promise<PathRow[]> {
    if (!q.english || q.lexemes.length === 0) return [];
    const { ids } = options;
    const p = new SqlParams();
    const lexemes = p.add(q.lexemes);
    const idf = p.add(q.idf);
    const alpha = `${p.add(bm25.contextWeight)}::float8`;
    const beta = `${p.add(bm25.kindWeight)}::float8`;
    const k1 = `${p.add(bm25.k1)}::float8`;
    const b = `${p.add(bm25.b)}::float8`;
    const avg = `${p.add(Math.max(1, q.avgLength))}::float8`;
    const total = `${p.add(q.idf.reduce((a, x) => a + x, 0) || 1)}::float8`;
    const query = p.add(q.english);
    let where = SEGMENT_SCOPE(scope, s, p) + (ids ? ` AND x.id = ANY(${p.add(ids)}::uuid[])` : '');
    let turns = 'message_segments x';
    if (scope === 'current' && !ids && q.scopeTurns <= CONVERSATION_SCAN_MAX) {
      // The conversation's turns first (OFFSET 0 keeps the planner from merging the two), the
      // words checked on each: with common words the index read every family's turns that hold
      // them, then kept this conversation's (12 against 20 ms at 100,000 turns on a server).
      turns = `(SELECT * FROM message_segments x WHERE ${where} OFFSET 0) x`;
      where = 'true';
    }
    const columns = `x.id, x.search_tsv, x.main_length + ${alpha} * x.context_length AS dl,
                CASE WHEN x.kinds_tsv @@ ${query}::tsquery THEN x.kinds_tsv END AS kinds_tsv`;
    const selected = `(x.search_tsv @@ ${query}::tsquery OR x.kinds_tsv @@ ${query}::tsquery)`;
    let hits = `hits AS (
         SELECT ${columns}
           FROM ${turns}
          WHERE ${where} AND ${selected}
       )`;
    // Scoring a turn in SQL costs about 50 times what ts_rank's C does: when many turns hold a
    // selecting word, ts_rank over every query word (more of them, and in the turn's own words
    // rather than its context, first) keeps the few hundred worth scoring.
    if (!ids && q.selectedTurns > BM25_SCORE_ALL_MAX) {
      const all = p.add(q.englishAll);
      const keep = p.add(options.preranked ?? Math.max(BM25_PRERANKED, limit * 5));
      // The ids first, then the rows of those kept: sorting thousands of whole rows (their
      // word lists) to keep a few hundred cost more than ranking them.
      const byWords = `ts_rank(x.search_tsv, ${all}::tsquery)`;
      const byWordsAndKinds = `${byWords} + ${beta} * ts_rank(x.kinds_tsv, ${all}::tsquery)`;
      const ranked = (filter: string, count: string, by = byWordsAndKinds) =>
        `SELECT x.id FROM ${turns} WHERE ${where} AND ${filter}
          ORDER BY ${by} DESC, x.id LIMIT ${count}`;
      const rowsOf = (idsSql: string) => `SELECT ${columns}
           FROM (${idsSql}) kept JOIN message_segments x ON x.id = kept.id`;
      hits = `hits AS (${rowsOf(ranked(selected, keep))})`;
      if (q.lexemes.length > 1) {
        // Where common words select (a wide scope), ranking every turn that holds one of them is
        // the slow tenth of the queries: tens of thousands of turns read. The turns holding
        // every query word come first, through the full-text index; the others are ranked only
        // when those are fewer than the turns kept, which they would mostly outrank anyway.
        // Holding every word already, they are ranked by their own words alone (the kinds'
        // ranking was a fifth of the time).
        const every = `x.search_tsv @@ ${p.add(q.englishEvery)}::tsquery`;
        hits = `every AS MATERIALIZED (${ranked(every, keep, byWords)}),
       hits AS (
         ${rowsOf('SELECT id FROM every')}
         UNION ALL
         ${rowsOf(
           ranked(
             `(SELECT count(*) FROM every) < ${keep} AND ${selected} AND NOT ${every}`,
             `${keep} - (SELECT count(*) FROM every)`,
           ),
         )}
       )`;
      }
    }
    // A word list cut to the query's words before it is unnested (ts_delete twice, in C): the
    // whole lists, some seventy words each with their positions, made the scoring 10 to 40%
    // slower.
    const queryWords = (tsv: string) =>
      `unnest(ts_delete(${tsv}, tsvector_to_array(ts_delete(${tsv}, ${lexemes}::text[]))))`;
    // A word's frequency: its positions in the turn, and in the context at alpha.
    const turnWords = `SELECT u.lexeme,
                              cardinality(u.weights)
                                - (1 - ${alpha}) * cardinality(array_positions(u.weights, 'D'))
                                AS tf
                         FROM ${queryWords('h.search_tsv')} AS u`;
    // ... and among the kinds of what the turn names at beta, for the few turns whose kinds
    // hold a query word (merging the two lists per word costs every turn a third more).
    const withKinds = `SELECT w.lexeme, sum(w.tf) AS tf
                         FROM (${turnWords}
                               UNION ALL
                               SELECT u.lexeme, ${beta} * cardinality(u.weights)
                                 FROM ${queryWords('h.kinds_tsv')} AS u) w
                         JOIN q ON q.lexeme = w.lexeme
                        GROUP BY w.lexeme`;
    const scored = (words: string) => `CROSS JOIN LATERAL (
           SELECT sum(q.idf * t.tf * (${k1} + 1)
                      / (t.tf + ${k1} * (1 - ${b} + ${b} * h.dl / ${avg}))) AS raw,
                  sum(q.idf * least(t.tf, 1)) / ${total} AS coverage
             FROM (${words}) t
             JOIN q ON q.lexeme = t.lexeme) s`;
    const rows: { id: string; raw: number; coverage: number }[] = await this.dataSource.query(
      `WITH q AS (SELECT * FROM unnest(${lexemes}::text[], ${idf}::float8[]) AS q(lexeme, idf)),
       ${hits}
       SELECT r.id, r.raw, r.coverage
         FROM (SELECT h.id, s.raw, s.coverage FROM hits h ${scored(turnWords)}
                WHERE h.kinds_tsv IS NULL
               UNION ALL
               SELECT h.id, s.raw, s.coverage FROM hits h ${scored(withKinds)}
                WHERE h.kinds_tsv IS NOT NULL) r
        WHERE r.raw IS NOT NULL
        ORDER BY r.raw DESC, r.id
        LIMIT ${p.add(limit)}`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.raw), coverage: Number(r.coverage) }));
  }

  /**
   * Full-text hits on summaries, facts or memories (simple configuration): ts_rank, with the
   * share of the query's keywords each holds as coverage.
   */
  async lexical(
    kind: Exclude<SourceKind, 'segment'>,
    scope: ScopeName,
    s: ScopeParams,
    q: LexicalQuery,
    limit: number,
    ids?: string[],
  ): Promise<PathRow[]> {
    if (!q.simple) return [];
    const sql = KINDS[kind];
    const p = new SqlParams();
    const query = p.add(q.simple);
    const keywords = p.add(q.keywords);
    const where = sql.scope(scope, s, p) + (ids ? ` AND x.id = ANY(${p.add(ids)}::uuid[])` : '');
    const rows: { id: string; raw: number; coverage: number }[] = await this.dataSource.query(
      `WITH q AS (
         SELECT websearch_to_tsquery('simple', ${query}) AS query,
                ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('simple', ${keywords})) AS u) AS lexemes
       )
       SELECT x.id, ts_rank(x.search_tsv, q.query) AS raw,
              (SELECT count(*) FROM unnest(x.search_tsv) AS u WHERE u.lexeme = ANY(q.lexemes))::float8
                / greatest(cardinality(q.lexemes), 1) AS coverage
         FROM ${sql.table} x, q
        WHERE ${where} AND x.search_tsv @@ q.query
        ORDER BY raw DESC, x.id
        LIMIT ${p.add(limit)}`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.raw), coverage: Number(r.coverage) }));
  }

  /**
   * Trigram fallback for text full-text search tokenizes badly: words with typos match by
   * word similarity, CJK windows (no spaces to split on) by substring; both through the
   * trigram index.
   */
  async trigram(
    kind: SourceKind,
    scope: ScopeName,
    s: ScopeParams,
    probes: { words: string[]; cjk: string[] },
    limit: number,
  ): Promise<PathRow[]> {
    if (probes.words.length === 0 && probes.cjk.length === 0) return [];
    const sql = KINDS[kind];
    const p = new SqlParams();
    const conditions: string[] = [];
    const scores: string[] = [];
    for (const word of probes.words) {
      const w = p.add(word);
      conditions.push(`${w} <% x.content`);
      scores.push(`word_similarity(${w}, x.content)`);
    }
    if (probes.cjk.length > 0) {
      const likes = probes.cjk.map((c) => p.add(`%${likeEscape(c)}%`));
      conditions.push(...likes.map((l) => `x.content LIKE ${l}`));
      scores.push(
        `(${likes.map((l) => `(x.content LIKE ${l})::int`).join(' + ')})::float8 / ${likes.length}`,
      );
    }
    const where = sql.scope(scope, s, p);
    const rows: { id: string; score: number }[] = await this.dataSource.query(
      `SELECT x.id, greatest(${scores.join(', ')}) AS score
         FROM ${sql.table} x
        WHERE ${where} AND (${conditions.join(' OR ')})
        ORDER BY score DESC, x.id
        LIMIT ${p.add(limit)}`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  }

  /** Items said within the time range (the latest first), for queries that name a period. */
  async inPeriod(
    kind: 'segment' | 'summary',
    scope: ScopeName,
    s: ScopeParams,
    from: Date,
    to: Date,
    limit: number,
  ): Promise<PathRow[]> {
    const sql = KINDS[kind];
    const p = new SqlParams();
    const where = sql.scope(scope, s, p);
    const start = p.add(from);
    const end = p.add(to);
    // Said in the period, or telling of it ("last Friday" said on the Monday after).
    const told = sql.told ? ` OR (${sql.told.to} > ${start} AND ${sql.told.from} < ${end})` : '';
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT x.id FROM ${sql.table} x
        WHERE ${where} AND ((${sql.timeTo} >= ${start} AND ${sql.timeFrom} < ${end})${told})
        ORDER BY ${sql.timeTo} DESC, x.id
        LIMIT ${p.add(limit)}`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: 1 }));
  }

  /**
   * The standing instructions and preferences told to the agent in the scope (standing.ts),
   * latest first: fusion raises the best matching of them.
   */
  async standing(scope: ScopeName, s: ScopeParams, limit: number): Promise<PathRow[]> {
    const p = new SqlParams();
    const where = SEGMENT_SCOPE(scope, s, p);
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT x.id FROM message_segments x
        WHERE ${STANDING_TURN_SQL} AND ${where} AND NOT ${SAID_TO_PERSON_SQL}
        ORDER BY x.occurred_at DESC, x.id
        LIMIT ${p.add(limit)}`,
      p.values,
    );
    return rows.map((r) => ({ id: r.id, score: 1 }));
  }
}
