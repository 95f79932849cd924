import { DatabaseReads } from '../database/database-reads.js';
import { Injectable } from '@nestjs/common';
import { segmentWithheldSql } from '../conversations/withheld-reply.js';
import { storyVisibleSql } from '../stories/story-visibility.js';
import type { ScopeParams } from './search.repository.js';
import { empty, run, sql } from '../database/sql.js';

export interface LexemeStats {
  lexeme: string;
  dfCurrent: number;
  dfAll: number;
}

export interface ScopeStats {
  segmentsCurrent: number;
  lengthCurrent: number;
  segmentsAll: number;
  lengthAll: number;
  /**
   * Whether the current conversation is one of the user's own, counted in the `All` figures: a
   * together conversation another member started is not, and the wider scope is then all of
   * them, not all but it.
   */
  currentOwned: boolean;
}

/**
 * The current conversation's counts are the whole conversation's: an agent's turn made for
 * another participant alone is taken out again, or its words would tell in this member's scores.
 * Only conversations held together can have one (the first EXISTS is all a solo one pays).
 */
const withheldCte = (conversationId: string, userId: string) => sql`, withheld AS MATERIALIZED (
         SELECT s.search_tsv || s.kinds_tsv AS tsv, s.main_length, s.context_length
           FROM message_segments s
          WHERE s.conversation_id = ${conversationId}
            AND EXISTS (SELECT 1 FROM conversation_participants p
                         WHERE p.conversation_id = ${conversationId} AND p.user_id <> ${userId})
            AND ${segmentWithheldSql('s', userId)}
       )`;

/**
 * What a search reads before it searches: the query words' document frequencies and the
 * scope's size for BM25, whether there are stories to search, and, for recall, the legacy's
 * clock. Word counts come from the per-conversation tables indexing keeps: no turn is read.
 */
@Injectable()
export class SearchStatsRepository {
  constructor(private readonly reads: DatabaseReads) {}

  /** Turn lexemes of the query with their document frequencies, and the scopes' sizes. */
  async lexemeStats(
    text: string,
    s: ScopeParams,
    contextWeight: number,
  ): Promise<{
    lexemes: LexemeStats[];
    stats: ScopeStats;
    keywords: string;
    /**
     * Whether the legacy has a story with passages the user may see (else that kind is not
     * searched): another member's private stories change nothing, not even the time it takes.
     */
    hasStories: boolean;
  }> {
    // Recall searches no conversation of its own: it reads no withheld turns either.
    const current = s.conversationId !== null;
    const withheld = {
      cte: current ? withheldCte(s.conversationId!, s.userId) : empty,
      df: current
        ? sql`- (SELECT count(*) FROM withheld w WHERE tsvector_to_array(w.tsv) @> ARRAY[lx.lexeme])`
        : empty,
      segments: current ? sql`- (SELECT count(*) FROM withheld)` : empty,
      length: current
        ? sql`- (SELECT coalesce(sum(main_length + ${contextWeight}::float8 * context_length), 0) FROM withheld)`
        : empty,
    };
    const [row]: {
      hasStories: boolean;
      lexemes: LexemeStats[] | null;
      keywords: string | null;
      segmentsCurrent: string | null;
      lengthCurrent: string | null;
      segmentsAll: string | null;
      lengthAll: string | null;
      currentOwned: boolean;
    }[] = await run(
      await this.reads.source(),
      sql`WITH owned AS (
         SELECT id FROM conversations WHERE legacy_id = ${s.legacyId} AND user_id = ${s.userId}
       ),
       lx AS (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', ${text})) AS u)
       ${withheld.cte}
       SELECT
         (SELECT json_agg(json_build_object(
             'lexeme', lx.lexeme,
             'dfCurrent', coalesce((SELECT t.df FROM search_term_stats t
                                     WHERE t.conversation_id = ${s.conversationId} AND t.lexeme = lx.lexeme), 0)
                          ${withheld.df},
             'dfAll', coalesce((SELECT sum(t.df) FROM search_term_stats t
                                 WHERE t.conversation_id IN (SELECT id FROM owned)
                                   AND t.lexeme = lx.lexeme), 0)) ORDER BY lx.lexeme)
            FROM lx) AS lexemes,
         (SELECT string_agg(d.token, ' ') FROM ts_debug('english', ${text}) AS d
           WHERE array_length(d.lexemes, 1) > 0) AS keywords,
         (SELECT segments FROM search_doc_stats WHERE conversation_id = ${s.conversationId})
           ${withheld.segments} AS "segmentsCurrent",
         (SELECT main_length + ${contextWeight}::float8 * context_length FROM search_doc_stats
           WHERE conversation_id = ${s.conversationId}) ${withheld.length} AS "lengthCurrent",
         (SELECT sum(segments) FROM search_doc_stats
           WHERE conversation_id IN (SELECT id FROM owned)) AS "segmentsAll",
         (SELECT sum(main_length + ${contextWeight}::float8 * context_length) FROM search_doc_stats
           WHERE conversation_id IN (SELECT id FROM owned)) AS "lengthAll",
         EXISTS (SELECT 1 FROM owned WHERE id = ${s.conversationId}) AS "currentOwned",
         EXISTS (SELECT 1 FROM stories st WHERE st.legacy_id = ${s.legacyId} AND st.total_chunks > 0
                    AND ${storyVisibleSql('st', s.userId)}) AS "hasStories"`,
    );
    return {
      lexemes: (row.lexemes ?? []).map((l) => ({
        lexeme: l.lexeme,
        dfCurrent: Number(l.dfCurrent),
        dfAll: Number(l.dfAll),
      })),
      keywords: row.keywords ?? '',
      hasStories: row.hasStories === true,
      stats: {
        segmentsCurrent: Number(row.segmentsCurrent ?? 0),
        lengthCurrent: Number(row.lengthCurrent ?? 0),
        segmentsAll: Number(row.segmentsAll ?? 0),
        lengthAll: Number(row.lengthAll ?? 0),
        currentOwned: row.currentOwned === true,
      },
    };
  }

  /** The latest time something was said in the user's conversations about the legacy. */
  async latestOccurred(userId: string, legacyId: string): Promise<Date | null> {
    const rows: { at: Date | null }[] = await run(
      await this.reads.source(),
      sql`SELECT max(occurred_at) AS at FROM message_segments WHERE legacy_id = ${legacyId} AND user_id = ${userId}`,
    );
    return rows[0]?.at ?? null;
  }
}
