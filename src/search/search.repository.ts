import { DatabaseReads } from '../database/database-reads.js';
import { activeInLegacySql } from '../facts/fact-visibility.js';
import { activeMemoryScopeSql } from '../memories/memory-scope.js';
import { storyPassageScopeSql } from '../stories/story-visibility.js';
import { chunkReadableSql, segmentReadableSql } from '../conversations/withheld-reply.js';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { denseTerms, similarityOf, widenHnswScan } from '../embeddings/vector-sql.js';
import type { QueryVector } from '../embeddings/embedding.service.js';
import type { SourceKind } from './search.types.js';
import { Sql, empty, join, likeEscape, raw, run, sql } from '../database/sql.js';
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
  table: Sql;
  /** Scope predicate over alias `x`. */
  scope: (scope: ScopeName, s: ScopeParams) => Sql;
  /** When the item was said or made, for the time path. */
  timeFrom: Sql;
  timeTo: Sql;
  /** The period the item tells of, if it has one (segments), also for the time path. */
  told?: { from: Sql; to: Sql };
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

const SEGMENT_SCOPE = (scope: ScopeName, s: ScopeParams): Sql => {
  if (scope === 'current') {
    const before = s.beforeTurn === null ? empty : sql` AND x.turn_index < ${s.beforeTurn}`;
    // Another participant's turns, but not an agent's turn made for them alone.
    return sql`x.conversation_id = ${s.conversationId}${before}
      AND ${segmentReadableSql('x', s.userId)}`;
  }
  const owner = sql`x.legacy_id = ${s.legacyId} AND x.user_id = ${s.userId}`;
  return scope === 'wider' && s.conversationId
    ? sql`${owner} AND x.conversation_id <> ${s.conversationId}`
    : owner;
};

const KINDS: Record<SourceKind, KindSql> = {
  segment: {
    table: raw('message_segments'),
    scope: SEGMENT_SCOPE,
    timeFrom: raw('x.occurred_at'),
    timeTo: raw('x.occurred_at'),
    told: { from: raw('x.told_from'), to: raw('x.told_to') },
  },
  summary: {
    table: raw('conversation_chunks'),
    scope: (scope, s) => {
      if (scope === 'current') {
        const before = s.beforeTurn === null ? empty : sql` AND x.range_start < ${s.beforeTurn}`;
        // Not one that covers a reply made for another participant alone.
        return sql`x.conversation_id = ${s.conversationId}${before}
          AND ${chunkReadableSql('x', s.userId)}`;
      }
      const owner = sql`x.legacy_id = ${s.legacyId} AND x.user_id = ${s.userId}`;
      return scope === 'wider' && s.conversationId
        ? sql`${owner} AND x.conversation_id <> ${s.conversationId}`
        : owner;
    },
    timeFrom: raw('x.first_occurred_at'),
    timeTo: raw('x.last_occurred_at'),
  },
  // The legacy's facts active as the user sees them (facts/fact-visibility.ts).
  fact: {
    table: raw('facts'),
    scope: (_scope, s) => activeInLegacySql('x', s.legacyId, s.userId),
    timeFrom: raw('x.created_at'),
    timeTo: raw('x.created_at'),
  },
  // Passages of the legacy's stories the user may see (stories/story-visibility.ts).
  story: {
    table: raw('story_chunks'),
    scope: (_scope, s) => storyPassageScopeSql('x', s.legacyId, s.userId),
    timeFrom: raw('x.created_at'),
    timeTo: raw('x.created_at'),
  },
  // The user's own active memories, about this legacy or about no legacy in particular
  // (memories/memory-scope.ts).
  memory: {
    table: raw('memories'),
    scope: (_scope, s) => activeMemoryScopeSql('x', s.userId, s.legacyId),
    timeFrom: raw('x.created_at'),
    timeTo: raw('x.created_at'),
  },
};

/** Standing turns and turns said to a person (standing.ts): constant SQL over alias `x`. */
const STANDING_TURN = raw(STANDING_TURN_SQL);
const SAID_TO_PERSON = raw(SAID_TO_PERSON_SQL);

/**
 * The search paths' SQL. Each query is scoped in SQL to what the user may see: their own
 * conversations' turns and summaries, their own memories, and the legacy's facts that are
 * theirs or shared. Nothing is filtered afterwards in memory.
 */
@Injectable()
export class SearchRepository {
  constructor(private readonly reads: DatabaseReads) {}

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
    return (await this.reads.source()).transaction(async (m) => {
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
    const { filter, distance } = denseTerms(q, kind);
    const rows = await run<{ id: string; distance: number }>(
      await this.reads.source(),
      sql`SELECT e.item_id AS id, ${distance} AS distance FROM embeddings e
        WHERE ${filter} AND e.item_id = ANY(${ids}::uuid[])`,
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
    const k = KINDS[kind];
    const { filter, distance } = denseTerms(q, kind);
    if (scope === 'current') {
      // One conversation's items are few: score each by its vector, looked up by primary key.
      // Joined the other way the planner scanned every vector of the kind (19 ms against 5 ms
      // at 100,000 turns on a server), as its default costs expect a disk, not a cache.
      const exact = await run<{ id: string; distance: number }>(
        m,
        sql`SELECT x.id, d.distance FROM ${k.table} x
           CROSS JOIN LATERAL (
             SELECT ${distance} AS distance FROM embeddings e
              WHERE ${filter} AND e.item_id = x.id) d
          WHERE ${k.scope(scope, s)}
          ORDER BY d.distance
          LIMIT ${limit}`,
      );
      return exact.map((r) => ({ id: r.id, score: similarityOf(q.model, Number(r.distance)) }));
    }
    // Vector rows carry their legacy (and turns their owner), which lets the index scan filter
    // early: nearest rows of other families are skipped before the join, not after.
    const owner =
      kind === 'segment'
        ? sql` AND e.legacy_id = ${s.legacyId} AND e.user_id = ${s.userId}`
        : kind === 'story' || kind === 'fact'
          ? sql` AND e.legacy_id = ${s.legacyId}`
          : empty;
    const rows = await run<{ id: string; distance: number }>(
      m,
      sql`SELECT x.id, ${distance} AS distance
         FROM embeddings e JOIN ${k.table} x ON x.id = e.item_id
        WHERE ${filter}${owner} AND ${k.scope(scope, s)}
        ORDER BY ${distance}
        LIMIT ${limit}`,
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
    // Each use binds its value again: the same numbers and lists, each cast where it is used.
    const lexemes = sql`${q.lexemes}::text[]`;
    const alpha = sql`${bm25.contextWeight}::float8`;
    const beta = sql`${bm25.kindWeight}::float8`;
    const k1 = sql`${bm25.k1}::float8`;
    const b = sql`${bm25.b}::float8`;
    const avg = sql`${Math.max(1, q.avgLength)}::float8`;
    const total = sql`${q.idf.reduce((a, x) => a + x, 0) || 1}::float8`;
    const query = sql`${q.english}::tsquery`;
    let where = sql`${SEGMENT_SCOPE(scope, s)}${ids ? sql` AND x.id = ANY(${ids}::uuid[])` : empty}`;
    let turns = sql`message_segments x`;
    if (scope === 'current' && !ids && q.scopeTurns <= CONVERSATION_SCAN_MAX) {
      // The conversation's turns first (OFFSET 0 keeps the planner from merging the two), the
      // words checked on each: with common words the index read every family's turns that hold
      // them, then kept this conversation's (12 against 20 ms at 100,000 turns on a server).
      turns = sql`(SELECT * FROM message_segments x WHERE ${where} OFFSET 0) x`;
      where = sql`true`;
    }
    const columns = sql`x.id, x.search_tsv, x.main_length + ${alpha} * x.context_length AS dl,
                CASE WHEN x.kinds_tsv @@ ${query} THEN x.kinds_tsv END AS kinds_tsv`;
    const selected = sql`(x.search_tsv @@ ${query} OR x.kinds_tsv @@ ${query})`;
    let hits = sql`hits AS (
         SELECT ${columns}
           FROM ${turns}
          WHERE ${where} AND ${selected}
       )`;
    // Scoring a turn in SQL costs about 50 times what ts_rank's C does: when many turns hold a
    // selecting word, ts_rank over every query word (more of them, and in the turn's own words
    // rather than its context, first) keeps the few hundred worth scoring.
    if (!ids && q.selectedTurns > BM25_SCORE_ALL_MAX) {
      const all = sql`${q.englishAll}::tsquery`;
      const keep = options.preranked ?? Math.max(BM25_PRERANKED, limit * 5);
      // The ids first, then the rows of those kept: sorting thousands of whole rows (their
      // word lists) to keep a few hundred cost more than ranking them.
      const byWords = sql`ts_rank(x.search_tsv, ${all})`;
      const byWordsAndKinds = sql`${byWords} + ${beta} * ts_rank(x.kinds_tsv, ${all})`;
      const ranked = (filter: Sql, count: Sql, by = byWordsAndKinds) =>
        sql`SELECT x.id FROM ${turns} WHERE ${where} AND ${filter}
          ORDER BY ${by} DESC, x.id LIMIT ${count}`;
      const rowsOf = (idsSql: Sql) => sql`SELECT ${columns}
           FROM (${idsSql}) kept JOIN message_segments x ON x.id = kept.id`;
      hits = sql`hits AS (${rowsOf(ranked(selected, sql`${keep}`))})`;
      if (q.lexemes.length > 1) {
        // Where common words select (a wide scope), ranking every turn that holds one of them is
        // the slow tenth of the queries: tens of thousands of turns read. The turns holding
        // every query word come first, through the full-text index; the others are ranked only
        // when those are fewer than the turns kept, which they would mostly outrank anyway.
        // Holding every word already, they are ranked by their own words alone (the kinds'
        // ranking was a fifth of the time).
        const every = sql`x.search_tsv @@ ${q.englishEvery}::tsquery`;
        hits = sql`every AS MATERIALIZED (${ranked(every, sql`${keep}`, byWords)}),
       hits AS (
         ${rowsOf(sql`SELECT id FROM every`)}
         UNION ALL
         ${rowsOf(
           ranked(
             sql`(SELECT count(*) FROM every) < ${keep} AND ${selected} AND NOT ${every}`,
             sql`${keep} - (SELECT count(*) FROM every)`,
           ),
         )}
       )`;
      }
    }
    // A word list cut to the query's words before it is unnested (ts_delete twice, in C): the
    // whole lists, some seventy words each with their positions, made the scoring 10 to 40%
    // slower.
    const queryWords = (tsv: Sql) =>
      sql`unnest(ts_delete(${tsv}, tsvector_to_array(ts_delete(${tsv}, ${lexemes}))))`;
    // A word's frequency: its positions in the turn, and in the context at alpha.
    const turnWords = sql`SELECT u.lexeme,
                              cardinality(u.weights)
                                - (1 - ${alpha}) * cardinality(array_positions(u.weights, 'D'))
                                AS tf
                         FROM ${queryWords(raw('h.search_tsv'))} AS u`;
    // ... and among the kinds of what the turn names at beta, for the few turns whose kinds
    // hold a query word (merging the two lists per word costs every turn a third more).
    const withKinds = sql`SELECT w.lexeme, sum(w.tf) AS tf
                         FROM (${turnWords}
                               UNION ALL
                               SELECT u.lexeme, ${beta} * cardinality(u.weights)
                                 FROM ${queryWords(raw('h.kinds_tsv'))} AS u) w
                         JOIN q ON q.lexeme = w.lexeme
                        GROUP BY w.lexeme`;
    const scored = (words: Sql) => sql`CROSS JOIN LATERAL (
           SELECT sum(q.idf * t.tf * (${k1} + 1)
                      / (t.tf + ${k1} * (1 - ${b} + ${b} * h.dl / ${avg}))) AS raw,
                  sum(q.idf * least(t.tf, 1)) / ${total} AS coverage
             FROM (${words}) t
             JOIN q ON q.lexeme = t.lexeme) s`;
    const rows = await run<{ id: string; raw: number; coverage: number }>(
      await this.reads.source(),
      sql`WITH q AS (SELECT * FROM unnest(${lexemes}, ${q.idf}::float8[]) AS q(lexeme, idf)),
       ${hits}
       SELECT r.id, r.raw, r.coverage
         FROM (SELECT h.id, s.raw, s.coverage FROM hits h ${scored(turnWords)}
                WHERE h.kinds_tsv IS NULL
               UNION ALL
               SELECT h.id, s.raw, s.coverage FROM hits h ${scored(withKinds)}
                WHERE h.kinds_tsv IS NOT NULL) r
        WHERE r.raw IS NOT NULL
        ORDER BY r.raw DESC, r.id
        LIMIT ${limit}`,
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
    const k = KINDS[kind];
    const onlyIds = ids ? sql` AND x.id = ANY(${ids}::uuid[])` : empty;
    const rows = await run<{ id: string; raw: number; coverage: number }>(
      await this.reads.source(),
      sql`WITH q AS (
         SELECT websearch_to_tsquery('simple', ${q.simple}) AS query,
                ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('simple', ${q.keywords})) AS u) AS lexemes
       )
       SELECT x.id, ts_rank(x.search_tsv, q.query) AS raw,
              (SELECT count(*) FROM unnest(x.search_tsv) AS u WHERE u.lexeme = ANY(q.lexemes))::float8
                / greatest(cardinality(q.lexemes), 1) AS coverage
         FROM ${k.table} x, q
        WHERE ${k.scope(scope, s)}${onlyIds} AND x.search_tsv @@ q.query
        ORDER BY raw DESC, x.id
        LIMIT ${limit}`,
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
    const k = KINDS[kind];
    const conditions: Sql[] = [];
    const scores: Sql[] = [];
    for (const word of probes.words) {
      conditions.push(sql`${word} <% x.content`);
      scores.push(sql`word_similarity(${word}, x.content)`);
    }
    if (probes.cjk.length > 0) {
      const likes = probes.cjk.map((c) => `%${likeEscape(c)}%`);
      conditions.push(...likes.map((l) => sql`x.content LIKE ${l}`));
      const matched = join(
        likes.map((l) => sql`(x.content LIKE ${l})::int`),
        ' + ',
      );
      scores.push(sql`(${matched})::float8 / ${raw(String(likes.length))}`);
    }
    const rows = await run<{ id: string; score: number }>(
      await this.reads.source(),
      sql`SELECT x.id, greatest(${join(scores, ', ')}) AS score
         FROM ${k.table} x
        WHERE ${k.scope(scope, s)} AND (${join(conditions, ' OR ')})
        ORDER BY score DESC, x.id
        LIMIT ${limit}`,
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
    const k = KINDS[kind];
    // Said in the period, or telling of it ("last Friday" said on the Monday after).
    const told = k.told ? sql` OR (${k.told.to} > ${from} AND ${k.told.from} < ${to})` : empty;
    const rows = await run<{ id: string }>(
      await this.reads.source(),
      sql`SELECT x.id FROM ${k.table} x
        WHERE ${k.scope(scope, s)} AND ((${k.timeTo} >= ${from} AND ${k.timeFrom} < ${to})${told})
        ORDER BY ${k.timeTo} DESC, x.id
        LIMIT ${limit}`,
    );
    return rows.map((r) => ({ id: r.id, score: 1 }));
  }

  /**
   * The standing instructions and preferences told to the agent in the scope (standing.ts),
   * latest first: fusion raises the best matching of them.
   */
  async standing(scope: ScopeName, s: ScopeParams, limit: number): Promise<PathRow[]> {
    const rows = await run<{ id: string }>(
      await this.reads.source(),
      sql`SELECT x.id FROM message_segments x
        WHERE ${STANDING_TURN} AND ${SEGMENT_SCOPE(scope, s)} AND NOT ${SAID_TO_PERSON}
        ORDER BY x.occurred_at DESC, x.id
        LIMIT ${limit}`,
    );
    return rows.map((r) => ({ id: r.id, score: 1 }));
  }
}
