import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { denseTerms, vectorText, widenHnswScan } from '../embeddings/vector-sql.js';
import { SqlParams, likeEscape } from '../database/sql-params.js';
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

/**
 * A fact matches a search by meaning when it is close to the query (FACT_SEARCH_MIN_SIMILARITY)
 * and within this much of the closest fact: sentence vectors of facts about the same person
 * all sit fairly close to each other, so an absolute cut alone lets too much through.
 */
const MEANING_MARGIN = 0.1;

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
  constructor(private readonly dataSource: DataSource) {}

  /** The facts among `ids` that the viewer may see, as they see them. */
  findByIds(ids: readonly string[], viewerId: string): Promise<FactEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.dataSource.manager.query(
      `SELECT ${viewerColumnsSql('$2')} FROM facts f
        WHERE f.id = ANY($1::uuid[]) AND ${visibleSql('f', '$2')}`,
      [ids, viewerId],
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
    const p = new SqlParams();
    const cursor = after
      ? `AND (f.created_at, f.id) < (${p.add(after[0])}::timestamptz, ${p.add(after[1])}::uuid)`
      : '';
    return this.dataSource.manager.query(
      `SELECT ${FACT_COLUMNS}, f.created_at::text AS "cursorKey" FROM facts f
        WHERE f.author_id = ${p.add(authorId)} AND f.status <> 'DELETED'
          AND f.legacy_id <> ALL(${p.add(memberOf)}::uuid[]) ${cursor}
        ORDER BY f.created_at DESC, f.id DESC LIMIT ${p.add(limit)}`,
      p.values,
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
    const p = new SqlParams(legacyId, viewerId);
    const where = [`f.legacy_id = $1`, visibleSql('f', '$2')];
    where.push(`${statusSql('f', '$2')} = ${p.add(filter.status ?? FactStatus.ACTIVE)}`);
    if (filter.visibility) where.push(`f.visibility = ${p.add(filter.visibility)}`);
    if (filter.category) where.push(`f.category = ${p.add(filter.category)}`);
    if (filter.authorId) where.push(`f.author_id = ${p.add(filter.authorId)}::uuid`);

    if (!search) {
      if (after)
        where.push(
          `(f.created_at, f.id) < (${p.add(after[0])}::timestamptz, ${p.add(after[1])}::uuid)`,
        );
      return this.dataSource.manager.query(
        `SELECT ${viewerColumnsSql('$2')}, f.created_at::text AS "cursorKey" FROM facts f
          WHERE ${where.join(' AND ')}
          ORDER BY f.created_at DESC, f.id DESC LIMIT ${p.add(limit)}`,
        p.values,
      );
    }
    const text = p.add(search.text);
    const lexical = `GREATEST(word_similarity(${text}, f.content),
                              CASE WHEN f.search_tsv @@ websearch_to_tsquery('simple', ${text})
                                     OR f.content ILIKE '%' || ${p.add(likeEscape(search.text))} || '%'
                                   THEN 1 ELSE 0 END)`;
    let join = '';
    let dense = 'NULL::float8';
    if (search.vector) {
      const terms = denseTerms(search.vector, FACT_KIND, p.add(vectorText(search.vector.vector)));
      join = `LEFT JOIN embeddings e ON e.item_id = f.id AND ${terms.filter}`;
      dense = terms.similarity;
    }
    const minSimilarity = p.add(search.minSimilarity);
    const cursor = after
      ? `WHERE (score, id) < (${p.add(Number(after[0]))}::float8, ${p.add(after[1])}::uuid)`
      : '';
    return this.dataSource.manager.query(
      `WITH matched AS (
         SELECT ${viewerColumnsSql('$2')}, ${lexical} AS lexical, ${dense} AS dense
           FROM facts f ${join}
          WHERE ${where.join(' AND ')}),
       best AS (SELECT max(dense) AS top FROM matched),
       scored AS (
         SELECT matched.*, (0.6 * COALESCE(dense, 0) + 0.4 * lexical)::float8 AS score
           FROM matched, best
          WHERE lexical >= 0.6
             OR (dense >= ${minSimilarity} AND dense >= best.top - ${MEANING_MARGIN}))
       SELECT *, score AS "cursorKey" FROM scored ${cursor}
        ORDER BY score DESC, id DESC LIMIT ${p.add(limit)}`,
      p.values,
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
    // $1 to $4 are shared by both variants below.
    const p = new SqlParams(legacyId, viewerId, query, limit);
    const scoredSql = (dense: string, join: string, where: string) =>
      `WITH visible AS (
         SELECT ${viewerColumnsSql('$2')}, ${dense} AS dense,
                CASE WHEN $3 = '' THEN 0 ELSE word_similarity($3, f.content) END AS lexical,
                LEAST(ln(GREATEST(${mentionCountSql('f', '$2')}, 1)::float8) / ln(10), 1) AS mentions
           FROM facts f ${join}
          WHERE ${where})
       SELECT *, (0.55 * COALESCE(dense, lexical) + 0.15 * lexical + 0.2 * mentions
                  + 0.1 * confidence)::float8 AS score
         FROM visible ORDER BY score DESC, id LIMIT $4`;
    const inScope = activeInLegacySql('f', '$1', '$2');
    if (!vector)
      return this.dataSource.manager.query(scoredSql('NULL::float8', '', inScope), p.values);

    const terms = denseTerms(vector, FACT_KIND, p.add(vectorText(vector.vector)));
    const poolSize = p.add(Math.max(CONTEXT_POOL, limit));
    const pool = `f.id IN (
         (SELECT f.id FROM embeddings e JOIN facts f ON f.id = e.item_id
           WHERE ${terms.filter} AND ${inScope}
           ORDER BY ${terms.distance} LIMIT ${poolSize})
         UNION
         (SELECT f.id FROM facts f WHERE ${inScope}
           ORDER BY ${mentionCountSql('f', '$2')} DESC, ${confidenceSql('f', '$2')} DESC, f.id
           LIMIT ${poolSize}))`;
    return this.dataSource.transaction(async (m) => {
      await widenHnswScan(m, CONTEXT_POOL);
      return m.query(
        scoredSql(
          terms.similarity,
          `LEFT JOIN embeddings e ON e.item_id = f.id AND ${terms.filter}`,
          `${inScope} AND ${pool}`,
        ),
        p.values,
      );
    });
  }
}
