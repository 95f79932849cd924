import { DatabaseReads } from '../database/database-reads.js';
import { Injectable } from '@nestjs/common';
import { vectorText } from '../embeddings/vector-sql.js';
import { MemoryEntity } from './memory.entity.js';
import { MemoryStatus, MemoryType } from './memory.enums.js';
import { QueryVector, columns, vectorJoin } from './memory-sql.js';
import { Sql, empty, join, likeEscape, raw, run, sql } from '../database/sql.js';

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
  constructor(private readonly reads: DatabaseReads) {}

  private conditions(userId: string, filter: MemoryListFilter): Sql[] {
    const statuses =
      filter.statuses.length > 0 ? filter.statuses : [MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED];
    const where = [sql`m.user_id = ${userId}`, sql`m.status = ANY(${statuses}::text[])`];
    if (filter.type) where.push(sql`m.type = ${filter.type}`);
    if (filter.legacyId) where.push(sql`m.legacy_id = ${filter.legacyId}`);
    if (filter.conversationId) where.push(sql`m.conversation_id = ${filter.conversationId}`);
    if (filter.from) where.push(sql`m.created_at >= ${filter.from}`);
    if (filter.to) where.push(sql`m.created_at < ${filter.to}`);
    return where;
  }

  /** Newest first, keyset-paged on (created_at, id). */
  async page(
    userId: string,
    filter: MemoryListFilter,
    limit: number,
    after?: { createdAt: string; id: string },
  ): Promise<MemoryEntity[]> {
    const where = this.conditions(userId, filter);
    if (after) {
      where.push(sql`(m.created_at, m.id) < (${after.createdAt}::timestamptz, ${after.id})`);
    }
    return run(
      await this.reads.source(),
      sql`SELECT ${columns()} FROM memories m WHERE ${join(where, ' AND ')}
        ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`,
    );
  }

  /**
   * Keyword or meaning: full-text matches rank first (1 + ts_rank), then substring and
   * trigram word similarity (typos, partial words), then cosine similarity to the query.
   */
  async search(
    userId: string,
    filter: MemoryListFilter,
    text: string,
    q: QueryVector | null,
    minSimilarity: number,
    limit: number,
    offset: number,
  ): Promise<(MemoryEntity & { rank: number })[]> {
    const where = this.conditions(userId, filter);
    const like = `%${likeEscape(text)}%`;
    let dense = sql`NULL::float8`;
    let joined = empty;
    let qv = sql`NULL::vector`;
    if (q) {
      qv = sql`${vectorText(q.vector)}::vector(${raw(String(q.dimensions))})`;
      const { on, similarity } = vectorJoin(q);
      joined = sql`CROSS JOIN qv LEFT JOIN embeddings e ON ${on}`;
      dense = similarity;
    }
    return run(
      await this.reads.source(),
      sql`WITH qv AS MATERIALIZED (SELECT ${qv} AS v)
       SELECT ${columns('x')}, x.rank FROM (
         SELECT y.*, GREATEST(y.fulltext, y.substring, y.words, y.dense) AS rank,
                (y.fulltext > 0 OR y.substring > 0 OR y.words >= 0.5
                   OR y.dense >= ${minSimilarity}) AS hit
           FROM (
             SELECT m.*,
                    CASE WHEN m.search_tsv @@ plainto_tsquery('simple', ${text})
                         THEN 1 + ts_rank(m.search_tsv, plainto_tsquery('simple', ${text}))
                         ELSE 0 END AS fulltext,
                    CASE WHEN m.content ILIKE ${like} THEN 1 ELSE 0 END AS substring,
                    word_similarity(${text}, m.content) AS words,
                    COALESCE(${dense}, 0) AS dense
               FROM memories m ${joined}
              WHERE ${join(where, ' AND ')}) y) x
        WHERE x.hit
        ORDER BY x.rank DESC, x.created_at DESC, x.id DESC
        LIMIT ${limit} OFFSET ${offset}`,
    );
  }

  async counts(userId: string): Promise<MemoryCounts[]> {
    const rows: { type: MemoryType; status: MemoryStatus; n: string }[] = await run(
      await this.reads.source(),
      sql`SELECT type, status, count(*) AS n FROM memories WHERE user_id = ${userId} GROUP BY type, status`,
    );
    return rows.map((r) => ({ type: r.type, status: r.status, count: Number(r.n) }));
  }
}
