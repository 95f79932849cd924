import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SqlParams, likeEscape } from '../database/sql-params.js';
import { vectorText } from '../embeddings/vector-sql.js';
import { MemoryEntity } from './memory.entity.js';
import { MemoryStatus, MemoryType } from './memory.enums.js';
import { QueryVector, columns, vectorJoin } from './memory-sql.js';

export interface MemoryListFilter {
  type?: MemoryType | null;
  legacyId?: string | null;
  conversationId?: string | null;
  /** Empty: ACTIVE and ARCHIVED. */
  statuses: MemoryStatus[];
  from?: Date | null;
  to?: Date | null;
}

export interface MemoryCounts {
  type: MemoryType;
  status: MemoryStatus;
  count: number;
}

/**
 * The user's memories as their controls show them: pages, keyword-or-meaning search, counts.
 * Read-only, and every query is scoped by the owning user in SQL.
 */
@Injectable()
export class MemoryListRepository {
  constructor(private readonly dataSource: DataSource) {}

  private conditions(userId: string, filter: MemoryListFilter, p: SqlParams): string[] {
    const statuses =
      filter.statuses.length > 0 ? filter.statuses : [MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED];
    const where = [`m.user_id = ${p.add(userId)}`, `m.status = ANY(${p.add(statuses)}::text[])`];
    if (filter.type) where.push(`m.type = ${p.add(filter.type)}`);
    if (filter.legacyId) where.push(`m.legacy_id = ${p.add(filter.legacyId)}`);
    if (filter.conversationId) where.push(`m.conversation_id = ${p.add(filter.conversationId)}`);
    if (filter.from) where.push(`m.created_at >= ${p.add(filter.from)}`);
    if (filter.to) where.push(`m.created_at < ${p.add(filter.to)}`);
    return where;
  }

  /** Newest first, keyset-paged on (created_at, id). */
  page(
    userId: string,
    filter: MemoryListFilter,
    limit: number,
    after?: { createdAt: string; id: string },
  ): Promise<MemoryEntity[]> {
    const p = new SqlParams();
    const where = this.conditions(userId, filter, p);
    if (after) {
      where.push(
        `(m.created_at, m.id) < (${p.add(after.createdAt)}::timestamptz, ${p.add(after.id)})`,
      );
    }
    return this.dataSource.manager.query(
      `SELECT ${columns()} FROM memories m WHERE ${where.join(' AND ')}
        ORDER BY m.created_at DESC, m.id DESC LIMIT ${p.add(limit)}`,
      p.values,
    );
  }

  /**
   * Keyword or meaning: full-text matches rank first (1 + ts_rank), then substring and
   * trigram word similarity (typos, partial words), then cosine similarity to the query.
   */
  search(
    userId: string,
    filter: MemoryListFilter,
    text: string,
    q: QueryVector | null,
    minSimilarity: number,
    limit: number,
    offset: number,
  ): Promise<(MemoryEntity & { rank: number })[]> {
    const p = new SqlParams();
    const where = this.conditions(userId, filter, p);
    const s = p.add(text);
    const like = p.add(`%${likeEscape(text)}%`);
    let dense = 'NULL::float8';
    let join = '';
    let qv = 'NULL::vector';
    if (q) {
      qv = `${p.add(vectorText(q.vector))}::vector(${q.dimensions})`;
      const { on, similarity } = vectorJoin(q);
      join = `CROSS JOIN qv LEFT JOIN embeddings e ON ${on}`;
      dense = similarity;
    }
    return this.dataSource.manager.query(
      `WITH qv AS MATERIALIZED (SELECT ${qv} AS v)
       SELECT ${columns('x')}, x.rank FROM (
         SELECT y.*, GREATEST(y.fulltext, y.substring, y.words, y.dense) AS rank,
                (y.fulltext > 0 OR y.substring > 0 OR y.words >= 0.5
                   OR y.dense >= ${p.add(minSimilarity)}) AS hit
           FROM (
             SELECT m.*,
                    CASE WHEN m.search_tsv @@ plainto_tsquery('simple', ${s})
                         THEN 1 + ts_rank(m.search_tsv, plainto_tsquery('simple', ${s}))
                         ELSE 0 END AS fulltext,
                    CASE WHEN m.content ILIKE ${like} THEN 1 ELSE 0 END AS substring,
                    word_similarity(${s}, m.content) AS words,
                    COALESCE(${dense}, 0) AS dense
               FROM memories m ${join}
              WHERE ${where.join(' AND ')}) y) x
        WHERE x.hit
        ORDER BY x.rank DESC, x.created_at DESC, x.id DESC
        LIMIT ${p.add(limit)} OFFSET ${p.add(offset)}`,
      p.values,
    );
  }

  async counts(userId: string): Promise<MemoryCounts[]> {
    const rows: { type: MemoryType; status: MemoryStatus; n: string }[] =
      await this.dataSource.manager.query(
        `SELECT type, status, count(*) AS n FROM memories WHERE user_id = $1 GROUP BY type, status`,
        [userId],
      );
    return rows.map((r) => ({ type: r.type, status: r.status, count: Number(r.n) }));
  }
}
