import { DatabaseReads } from '../database/database-reads.js';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Candidate, SourceKind } from './search.types.js';
import { Sql, run, sql } from '../database/sql.js';

const DETAILS: Record<SourceKind, (ids: string[]) => Sql> = {
  segment: (
    ids,
  ) => sql`SELECT x.id, x.conversation_id AS "conversationId", x.message_id AS "messageId",
                   x.turn_index AS "turnStart", x.turn_index AS "turnEnd", x.position,
                   x.content AS text, x.speaker, x.caption, x.is_code AS "isCode",
                   x.token_count AS tokens, x.occurred_at AS "occurredFrom",
                   x.occurred_at AS "occurredTo", x.told_from AS "toldFrom",
                   x.told_to AS "toldTo", x.created_at AS "createdAt",
                   x.user_id AS "ownerId", x.role AS label, '{}'::uuid[] AS "sourceMessageIds"
              FROM message_segments x WHERE x.id = ANY(${ids}::uuid[])`,
  summary: (
    ids,
  ) => sql`SELECT x.id, x.conversation_id AS "conversationId", NULL::uuid AS "messageId",
                   x.range_start AS "turnStart", x.range_end AS "turnEnd", NULL::int AS position,
                   x.content AS text, NULL AS speaker, NULL AS caption, false AS "isCode",
                   x.token_count AS tokens, x.first_occurred_at AS "occurredFrom",
                   x.last_occurred_at AS "occurredTo", x.created_at AS "createdAt",
                   x.user_id AS "ownerId", NULL AS label, '{}'::uuid[] AS "sourceMessageIds"
              FROM conversation_chunks x WHERE x.id = ANY(${ids}::uuid[])`,
  fact: (
    ids,
  ) => sql`SELECT x.id, x.source_conversation_id AS "conversationId", NULL::uuid AS "messageId",
                x.source_range_start AS "turnStart", x.source_range_end AS "turnEnd",
                NULL::int AS position, x.content AS text, NULL AS speaker, NULL AS caption,
                false AS "isCode", 0 AS tokens, x.valid_from AS "occurredFrom",
                x.valid_from AS "occurredTo", x.created_at AS "createdAt",
                x.author_id AS "ownerId", x.visibility AS label,
                x.source_message_ids AS "sourceMessageIds", x.category
           FROM facts x WHERE x.id = ANY(${ids}::uuid[])`,
  memory: (
    ids,
  ) => sql`SELECT x.id, x.conversation_id AS "conversationId", x.source_message_id AS "messageId",
                  x.source_turn_index AS "turnStart", x.source_turn_index AS "turnEnd",
                  NULL::int AS position, x.content AS text, NULL AS speaker, NULL AS caption,
                  false AS "isCode", 0 AS tokens, x.valid_from AS "occurredFrom",
                  x.valid_from AS "occurredTo", x.created_at AS "createdAt",
                  x.user_id AS "ownerId", x.type AS label,
                  CASE WHEN x.source_message_id IS NULL THEN '{}'::uuid[]
                       ELSE ARRAY[x.source_message_id] END AS "sourceMessageIds"
             FROM memories x WHERE x.id = ANY(${ids}::uuid[])`,
  story: (ids) => sql`SELECT x.id, NULL::uuid AS "conversationId", NULL::uuid AS "messageId",
                 NULL::int AS "turnStart", NULL::int AS "turnEnd", x.ordinal AS position,
                 x.content AS text, NULL AS speaker, NULL AS caption, false AS "isCode",
                 x.token_count AS tokens, st.occurred_at AS "occurredFrom",
                 st.occurred_at AS "occurredTo", st.created_at AS "createdAt",
                 x.author_id AS "ownerId", st.visibility AS label,
                 '{}'::uuid[] AS "sourceMessageIds",
                 json_build_object('storyId', st.id, 'title', st.title, 'page', x.page,
                                   'charStart', x.char_start, 'charEnd', x.char_end) AS story
            FROM story_chunks x JOIN stories st ON st.id = x.story_id
           WHERE x.id = ANY(${ids}::uuid[])`,
};

export type CandidateDetails = Omit<Candidate, 'kind' | 'scope' | 'paths' | 'coverage'>;

export interface ProvenanceMessage {
  id: string;
  conversationId: string;
  turnIndex: number;
  metadata: Record<string, unknown>;
  occurredAt: Date;
}

/**
 * What the paths found, loaded once they have: each candidate's row as ranking and rendering
 * need it, and the turns it came from. The paths have already scoped the ids to what the user
 * may see; provenance is scoped again, as a shared fact's turns are its author's.
 */
@Injectable()
export class CandidateRepository {
  constructor(private readonly reads: DatabaseReads) {}

  async details(kind: SourceKind, ids: string[]): Promise<Map<string, CandidateDetails>> {
    if (ids.length === 0) return new Map();
    const rows = await run<CandidateDetails>(await this.reads.source(), DETAILS[kind](ids));
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * The turns items came from, with their metadata, limited to the user's own conversations:
   * a fact another member shared never reveals the turns it was taken from.
   */
  async provenanceMessages(
    userId: string,
    refs: {
      messageIds: string[];
      ranges: { conversationId: string; start: number; end: number }[];
    },
    manager?: EntityManager,
  ): Promise<ProvenanceMessage[]> {
    if (refs.messageIds.length === 0 && refs.ranges.length === 0) return [];
    // Two index lookups joined by UNION: an OR with EXISTS would scan every turn of the user.
    return run(
      manager ?? (await this.reads.source()),
      sql`SELECT m.id, m.conversation_id AS "conversationId", m.turn_index AS "turnIndex",
              m.metadata, m.occurred_at AS "occurredAt"
         FROM messages m
        WHERE m.id = ANY(${refs.messageIds}::uuid[]) AND m.user_id = ${userId}
       UNION
       SELECT m.id, m.conversation_id, m.turn_index, m.metadata, m.occurred_at
         FROM unnest(${refs.ranges.map((r) => r.conversationId)}::uuid[], ${refs.ranges.map((r) => r.start)}::int[], ${refs.ranges.map((r) => r.end)}::int[]) AS r(c, s, e)
         JOIN messages m ON m.conversation_id = r.c AND m.turn_index BETWEEN r.s AND r.e
        WHERE m.user_id = ${userId}
        ORDER BY 2, 3`,
    );
  }
}
