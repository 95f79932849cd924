import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { answeredAloneSql } from '../conversations/withheld-reply.js';
import { raw, run, sql } from '../database/sql.js';

/** A turn that has no segments yet, with the turn before it (its context). */
export interface PendingMessage {
  id: string;
  conversationId: string;
  legacyId: string;
  userId: string;
  turnIndex: number;
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  occurredAt: Date;
  /** The author's time zone, in which the turn's own time expressions are read. */
  timezone: string | null;
  previousContent: string | null;
  previousMetadata: Record<string, unknown> | null;
}

export interface NewSegment {
  messageId: string;
  conversationId: string;
  legacyId: string;
  userId: string;
  turnIndex: number;
  position: number;
  role: string;
  speaker: string | null;
  caption: string | null;
  context: string | null;
  content: string;
  isCode: boolean;
  language: string | null;
  charStart: number;
  charEnd: number;
  tokenCount: number;
  occurredAt: Date;
  /** The period the chunk tells of, if it names one. */
  toldFrom: Date | null;
  toldTo: Date | null;
  /** What the things it names are kinds of (word-kinds.ts), if any. */
  kinds: string | null;
  /** KINDS_VERSION when kinds were read; null when not (the KINDS_JOB reads them later). */
  kindsVersion: number | null;
}

/**
 * The text a segment is embedded with, as SQL over `i` (the sweeper re-embeds from it) and as
 * the same function in TypeScript: the preceding context, then the speaker, content and caption.
 */
export const SEGMENT_EMBED_TEXT_SQL = `concat_ws(E'\\n', i.context, concat(i.speaker || ': ', i.content, ' [image: ' || i.caption || ']'))`;

export function segmentEmbedText(s: {
  context: string | null;
  speaker: string | null;
  content: string;
  caption: string | null;
}): string {
  const main = `${s.speaker !== null ? `${s.speaker}: ` : ''}${s.content}${
    s.caption !== null ? ` [image: ${s.caption}]` : ''
  }`;
  return s.context !== null ? `${s.context}\n${main}` : main;
}

/** Words of the main text and of the context, as full-text search counts them (for BM25). */
const MAIN_TSV = `to_tsvector('english', coalesce(t.speaker, '') || ' ' || t.content || ' ' || coalesce(t.caption, ''))`;
const CONTEXT_TSV = `to_tsvector('english', coalesce(t.context, ''))`;

@Injectable()
export class SegmentRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /**
   * Turns of a conversation without segments, oldest first. Notices (a failed reply's, the
   * offline one: MessageEntity.placeholder) say nothing about the conversation and are never
   * indexed, nor given as the turn before one that is; nor is a reply made for one participant
   * alone (withheld-reply.ts), since every participant reads the index.
   */
  pendingMessages(conversationId: string, limit: number): Promise<PendingMessage[]> {
    return run(
      this.m(),
      sql`SELECT m.id, m.conversation_id AS "conversationId", m.legacy_id AS "legacyId",
              m.user_id AS "userId", m.turn_index AS "turnIndex", m.role, m.content, m.metadata,
              m.occurred_at AS "occurredAt", u.timezone,
              p.content AS "previousContent", p.metadata AS "previousMetadata"
         FROM messages m
         LEFT JOIN users u ON u.id = m.user_id
         LEFT JOIN messages p ON p.conversation_id = m.conversation_id
                             AND p.turn_index = m.turn_index - 1 AND NOT p.placeholder
                             AND NOT ${answeredAloneSql('p')}
        WHERE m.conversation_id = ${conversationId}
          AND NOT EXISTS (SELECT 1 FROM message_segments s WHERE s.message_id = m.id)
          AND NOT m.placeholder
        ORDER BY m.turn_index
        LIMIT ${limit}`,
    );
  }

  /**
   * Inserts segments, skipping any already stored (a job that runs twice, or two workers), and
   * returns the ids of those inserted, with BM25 lengths computed by the database itself.
   */
  async insert(
    manager: EntityManager,
    rows: NewSegment[],
  ): Promise<{ id: string; messageId: string; position: number }[]> {
    if (rows.length === 0) return [];
    const col = <K extends keyof NewSegment>(k: K) => rows.map((r) => r[k]);
    return run(
      manager,
      sql`INSERT INTO message_segments (message_id, conversation_id, legacy_id, user_id, turn_index,
                                     position, role, speaker, caption, context, content, is_code,
                                     language, char_start, char_end, token_count, occurred_at,
                                     main_length, context_length, told_from, told_to,
                                     told_checked, kinds, kinds_version)
       SELECT t.message_id, t.conversation_id, t.legacy_id, t.user_id, t.turn_index, t.position,
              t.role, t.speaker, t.caption, t.context, t.content, t.is_code, t.language,
              t.char_start, t.char_end, t.token_count, t.occurred_at,
              search_word_count(${raw(MAIN_TSV)}), search_word_count(${raw(CONTEXT_TSV)}),
              t.told_from, t.told_to, true, t.kinds, t.kinds_version
         FROM unnest(
                     ${col('messageId')}::uuid[],
                     ${col('conversationId')}::uuid[],
                     ${col('legacyId')}::uuid[],
                     ${col('userId')}::uuid[],
                     ${col('turnIndex')}::int[],
                     ${col('position')}::int[],
                     ${col('role')}::text[],
                     ${col('speaker')}::text[],
                     ${col('caption')}::text[],
                     ${col('context')}::text[],
                     ${col('content')}::text[],
                     ${col('isCode')}::bool[],
                     ${col('language')}::text[],
                     ${col('charStart')}::int[],
                     ${col('charEnd')}::int[],
                     ${col('tokenCount')}::int[],
                     ${col('occurredAt')}::timestamptz[],
                     ${col('toldFrom')}::timestamptz[],
                     ${col('toldTo')}::timestamptz[],
                     ${col('kinds')}::text[],
                     ${col('kindsVersion')}::smallint[])
           AS t(message_id, conversation_id, legacy_id, user_id, turn_index, position, role,
                speaker, caption, context, content, is_code, language, char_start, char_end,
                token_count, occurred_at, told_from, told_to, kinds, kinds_version)
       ON CONFLICT (message_id, position) DO NOTHING
       RETURNING id, message_id AS "messageId", position`,
    );
  }

  /** Adds newly inserted segments to their conversations' full-text statistics. */
  async addToStats(manager: EntityManager, segmentIds: string[]): Promise<void> {
    if (segmentIds.length === 0) return;
    await run(
      manager,
      sql`INSERT INTO search_term_stats (conversation_id, lexeme, df)
       SELECT s.conversation_id, u.lexeme, count(*)::int
         FROM message_segments s CROSS JOIN LATERAL unnest(s.search_tsv || s.kinds_tsv) AS u
        WHERE s.id = ANY(${segmentIds}::uuid[])
        GROUP BY s.conversation_id, u.lexeme
       ON CONFLICT (conversation_id, lexeme) DO UPDATE SET df = search_term_stats.df + EXCLUDED.df`,
    );
    await run(
      manager,
      sql`INSERT INTO search_doc_stats (conversation_id, segments, main_length, context_length)
       SELECT conversation_id, count(*)::int, sum(main_length), sum(context_length)
         FROM message_segments WHERE id = ANY(${segmentIds}::uuid[])
        GROUP BY conversation_id
       ON CONFLICT (conversation_id) DO UPDATE SET
         segments = search_doc_stats.segments + EXCLUDED.segments,
         main_length = search_doc_stats.main_length + EXCLUDED.main_length,
         context_length = search_doc_stats.context_length + EXCLUDED.context_length`,
    );
  }

  /** Segments whose told period was never read (stored before it existed), with their zone. */
  toldPending(
    limit: number,
  ): Promise<{ id: string; content: string; occurredAt: Date; timezone: string | null }[]> {
    return run(
      this.m(),
      sql`SELECT s.id, s.content, s.occurred_at AS "occurredAt", u.timezone
         FROM message_segments s LEFT JOIN users u ON u.id = s.user_id
        WHERE NOT s.told_checked
        ORDER BY s.id
        LIMIT ${limit}`,
    );
  }

  /** Stores told periods read for segments (null where the text names none). */
  async setTold(rows: { id: string; from: Date | null; to: Date | null }[]): Promise<void> {
    if (rows.length === 0) return;
    await run(
      this.m(),
      sql`UPDATE message_segments s SET told_from = t.told_from, told_to = t.told_to,
              told_checked = true
         FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.from)}::timestamptz[], ${rows.map((r) => r.to)}::timestamptz[]) AS t(id, told_from, told_to)
        WHERE s.id = t.id`,
    );
  }

  /** Segments whose kinds were never read, or read by rules older than `version`. */
  kindsPending(
    limit: number,
    version: number,
  ): Promise<
    {
      id: string;
      content: string;
      caption: string | null;
      isCode: boolean;
      role: string;
      speaker: string | null;
    }[]
  > {
    return run(
      this.m(),
      sql`SELECT s.id, s.content, s.caption, s.is_code AS "isCode", s.role, s.speaker
         FROM message_segments s
        WHERE s.kinds_version IS NULL OR s.kinds_version < ${version}
        ORDER BY s.id
        LIMIT ${limit}`,
    );
  }

  /**
   * Stores the kinds read for segments by rules of `version` (null where there are none) and
   * nets their conversations' full-text statistics, in one statement: a word the new kinds bring
   * counts once more, a word only the old kinds had (the `before` snapshot) once less. A word
   * no segment holds any more stays at 0, which no search matches.
   */
  async setKinds(rows: { id: string; kinds: string | null }[], version: number): Promise<void> {
    if (rows.length === 0) return;
    await run(
      this.m(),
      sql`WITH before AS (
         SELECT s.id, s.kinds_version,
                ARRAY(SELECT u.lexeme FROM unnest(s.search_tsv || s.kinds_tsv) AS u) AS lexemes
           FROM message_segments s
          WHERE s.id = ANY(${rows.map((r) => r.id)}::uuid[]) AND (s.kinds_version IS NULL OR s.kinds_version < ${version})
       ),
       updated AS (
         UPDATE message_segments s SET kinds = t.kinds, kinds_version = ${version}
           FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.kinds)}::text[]) AS t(id, kinds), before b
          -- Checked again after waiting for a row another run holds: a row it read meanwhile
          -- (by these rules or other ones, as in a rolling upgrade) no longer fits the
          -- snapshot the statistics are netted against, and is left for a later run.
          WHERE s.id = t.id AND b.id = t.id
            AND s.kinds_version IS NOT DISTINCT FROM b.kinds_version
         RETURNING s.id, s.conversation_id,
                   ARRAY(SELECT u.lexeme FROM unnest(s.search_tsv || s.kinds_tsv) AS u) AS lexemes
       ),
       delta AS (
         SELECT u.conversation_id, l.lexeme, 1 AS d
           FROM updated u JOIN before b ON b.id = u.id
          CROSS JOIN LATERAL unnest(u.lexemes) AS l(lexeme)
          WHERE NOT l.lexeme = ANY(b.lexemes)
         UNION ALL
         SELECT u.conversation_id, l.lexeme, -1
           FROM updated u JOIN before b ON b.id = u.id
          CROSS JOIN LATERAL unnest(b.lexemes) AS l(lexeme)
          WHERE NOT l.lexeme = ANY(u.lexemes)
       ),
       net AS (
         SELECT conversation_id, lexeme, sum(d)::int AS d FROM delta
          GROUP BY conversation_id, lexeme HAVING sum(d) <> 0
       ),
       -- A word counted before is in the statistics: lowered in place (an insert proposing a
       -- negative count would break their check even where it would have updated).
       lowered AS (
         UPDATE search_term_stats t SET df = t.df + n.d
           FROM net n
          WHERE n.d < 0 AND t.conversation_id = n.conversation_id AND t.lexeme = n.lexeme
       )
       INSERT INTO search_term_stats (conversation_id, lexeme, df)
       SELECT conversation_id, lexeme, d FROM net WHERE d > 0
       ON CONFLICT (conversation_id, lexeme) DO UPDATE SET df = search_term_stats.df + EXCLUDED.df`,
    );
  }

  /** Conversations with turns that have no segments (after an outage or a restore). */
  conversationsWithPending(limit: number): Promise<{ id: string }[]> {
    return run(
      this.m(),
      sql`SELECT c.id FROM conversations c
        WHERE EXISTS (
          SELECT 1 FROM messages m
           WHERE m.conversation_id = c.id
             AND NOT EXISTS (SELECT 1 FROM message_segments s WHERE s.message_id = m.id)
             AND NOT m.placeholder)
        ORDER BY c.last_activity_at DESC
        LIMIT ${limit}`,
    );
  }

  countForConversation(conversationId: string): Promise<number> {
    return run(
      this.m(),
      sql`SELECT count(*)::int AS n FROM message_segments WHERE conversation_id = ${conversationId}`,
    ).then((rows: { n: number }[]) => rows[0].n);
  }
}
