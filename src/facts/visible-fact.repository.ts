import { DatabaseReads } from '../database/database-reads.js';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { denseTerms, widenHnswScan } from '../embeddings/vector-sql.js';
import {
  activeInLegacySql,
  confidenceSql,
  mentionCountSql,
  statusSql,
  viewerColumnsSql,
  visibleSql,
} from './fact-visibility.js';
import { FactEntity } from './fact.entity.js';
import { FactCategory, FactStatus, FactVisibility } from './fact.enums.js';
import { FACT_COLUMNS, FACT_KIND } from './fact.repository.js';
import { Sql, empty, join, likeEscape, raw, run, sql } from '../database/sql.js';

/**
 * A fact matches a search by meaning when it is close to the query (FACT_SEARCH_MIN_SIMILARITY)
 * and within this much of the closest fact: sentence vectors of facts about the same person
 * all sit fairly close to each other, so an absolute cut alone lets too much through.
 */
const MEANING_MARGIN = raw('0.1');

/** Facts scored for the context: this many nearest, this many most mentioned. */
const CONTEXT_POOL = 100;

export interface FactFilterSql {
  visibility?: FactVisibility | null;
  category?: FactCategory | null;
  authorId?: string | null;
  status?: FactStatus | null;
}

export interface SearchSql {
  text: string;
  vector: QueryVector | null;
  minSimilarity: number;
}

export type RankedFact = FactEntity & { score: number };

/**
 * Facts as a reader sees them: by id, pages with search, and the agent's context. Each query
 * filters and projects with fact-visibility.ts's SQL (pageLeftBehind reads the reader's own facts
 * only), so that lists can never show more than a single fact would.
 */
@Injectable()
export class VisibleFactRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reads: DatabaseReads,
  ) {}

  /** The facts among `ids` that the viewer may see, as they see them. */
  findByIds(ids: readonly string[], viewerId: string): Promise<FactEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return run(
      this.dataSource.manager,
      sql`SELECT ${viewerColumnsSql(viewerId)} FROM facts f
        WHERE f.id = ANY(${ids}::uuid[]) AND ${visibleSql('f', viewerId)}`,
    );
  }

  /**
   * The author's facts (not deleted) in legacies they are no longer a member of, newest first.
   * Their own facts only, which they see whole: no viewer projection.
   */
  pageLeftBehind(
    authorId: string,
    memberOf: string[],
    limit: number,
    after?: (string | number)[],
  ): Promise<(FactEntity & { cursorKey: string })[]> {
    const cursor = after
      ? sql`AND (f.created_at, f.id) < (${after[0]}::timestamptz, ${after[1]}::uuid)`
      : empty;
    return run(
      this.dataSource.manager,
      sql`SELECT ${FACT_COLUMNS}, f.created_at::text AS "cursorKey" FROM facts f
        WHERE f.author_id = ${authorId} AND f.status <> 'DELETED'
          AND f.legacy_id <> ALL(${memberOf}::uuid[]) ${cursor}
        ORDER BY f.created_at DESC, f.id DESC LIMIT ${limit}`,
    );
  }

  /**
   * A page of the facts `viewerId` may see in a legacy. Without a search: newest first, cursor
   * (created_at, id). With one: facts matching by keywords (full text, substring, trigram word
   * similarity) or by meaning (cosine to the query vector), best first, cursor (score, id).
   */
  async page(
    legacyId: string,
    viewerId: string,
    filter: FactFilterSql,
    limit: number,
    after: (string | number)[] | undefined,
    search: SearchSql | null,
  ): Promise<(FactEntity & { cursorKey: string | number })[]> {
    const where: Sql[] = [sql`f.legacy_id = ${legacyId}`, visibleSql('f', viewerId)];
    where.push(sql`${statusSql('f', viewerId)} = ${filter.status ?? FactStatus.ACTIVE}`);
    if (filter.visibility) where.push(sql`f.visibility = ${filter.visibility}`);
    if (filter.category) where.push(sql`f.category = ${filter.category}`);
    if (filter.authorId) where.push(sql`f.author_id = ${filter.authorId}::uuid`);

    if (!search) {
      if (after)
        where.push(sql`(f.created_at, f.id) < (${after[0]}::timestamptz, ${after[1]}::uuid)`);
      return run(
        await this.reads.source(),
        sql`SELECT ${viewerColumnsSql(viewerId)}, f.created_at::text AS "cursorKey" FROM facts f
          WHERE ${join(where, ' AND ')}
          ORDER BY f.created_at DESC, f.id DESC LIMIT ${limit}`,
      );
    }
    const text = search.text;
    const lexical = sql`GREATEST(word_similarity(${text}, f.content),
                              CASE WHEN f.search_tsv @@ websearch_to_tsquery('simple', ${text})
                                     OR f.content ILIKE '%' || ${likeEscape(search.text)} || '%'
                                   THEN 1 ELSE 0 END)`;
    let joined = empty;
    let dense = sql`NULL::float8`;
    if (search.vector) {
      const terms = denseTerms(search.vector, FACT_KIND);
      joined = sql`LEFT JOIN embeddings e ON e.item_id = f.id AND ${terms.filter}`;
      dense = terms.similarity;
    }
    const cursor = after
      ? sql`WHERE (score, id) < (${Number(after[0])}::float8, ${after[1]}::uuid)`
      : empty;
    return run(
      await this.reads.source(),
      sql`WITH matched AS (
         SELECT ${viewerColumnsSql(viewerId)}, ${lexical} AS lexical, ${dense} AS dense
           FROM facts f ${joined}
          WHERE ${join(where, ' AND ')}),
       best AS (SELECT max(dense) AS top FROM matched),
       scored AS (
         SELECT matched.*, (0.6 * COALESCE(dense, 0) + 0.4 * lexical)::float8 AS score
           FROM matched, best
          WHERE lexical >= 0.6
             OR (dense >= ${search.minSimilarity} AND dense >= best.top - ${MEANING_MARGIN}))
       SELECT *, score AS "cursorKey" FROM scored ${cursor}
        ORDER BY score DESC, id DESC LIMIT ${limit}`,
    );
  }

  /**
   * The legacy's active facts the viewer may see, for the agent's context: most relevant to the
   * query and most mentioned first. With a query vector only a pool is scored: the nearest
   * CONTEXT_POOL (HNSW, iterative scan past other legacies' vectors) and the CONTEXT_POOL most
   * mentioned and confident; word similarity then ranks within it. Scoring every fact cost 60 ms
   * at 1,000 facts on the embedded database, and so did adding trigram matches of the whole
   * message to the pool (a long message shares trigrams with nearly every fact); the pool alone
   * costs 24 ms. A fact outside it cannot reach the few places the context has.
   */
  async forContext(
    legacyId: string,
    viewerId: string,
    query: string,
    vector: QueryVector | null,
    limit: number,
  ): Promise<(RankedFact & { dense: number | null; lexical: number; mentions: number })[]> {
    const scoredSql = (dense: Sql, joined: Sql, where: Sql) =>
      sql`WITH visible AS (
         SELECT ${viewerColumnsSql(viewerId)}, ${dense} AS dense,
                CASE WHEN ${query} = '' THEN 0 ELSE word_similarity(${query}, f.content) END AS lexical,
                LEAST(ln(GREATEST(${mentionCountSql('f', viewerId)}, 1)::float8) / ln(10), 1) AS mentions
           FROM facts f ${joined}
          WHERE ${where})
       SELECT *, (0.55 * COALESCE(dense, lexical) + 0.15 * lexical + 0.2 * mentions
                  + 0.1 * confidence)::float8 AS score
         FROM visible ORDER BY score DESC, id LIMIT ${limit}`;
    const inScope = activeInLegacySql('f', legacyId, viewerId);
    if (!vector) return run(this.dataSource.manager, scoredSql(sql`NULL::float8`, empty, inScope));

    const terms = denseTerms(vector, FACT_KIND);
    const poolSize = Math.max(CONTEXT_POOL, limit);
    const pool = sql`f.id IN (
         (SELECT f.id FROM embeddings e JOIN facts f ON f.id = e.item_id
           WHERE ${terms.filter} AND ${inScope}
           ORDER BY ${terms.distance} LIMIT ${poolSize})
         UNION
         (SELECT f.id FROM facts f WHERE ${inScope}
           ORDER BY ${mentionCountSql('f', viewerId)} DESC, ${confidenceSql('f', viewerId)} DESC, f.id
           LIMIT ${poolSize}))`;
    return this.dataSource.transaction(async (m) => {
      await widenHnswScan(m, CONTEXT_POOL);
      return run(
        m,
        scoredSql(
          terms.similarity,
          sql`LEFT JOIN embeddings e ON e.item_id = f.id AND ${terms.filter}`,
          sql`${inScope} AND ${pool}`,
        ),
      );
    });
  }
}
