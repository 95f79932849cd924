import { countTokens } from '../llm/tokenizer.js';
import { Sql, raw, sql } from '../database/sql.js';

/**
 * A reply made for one participant alone: the one place that decides who reads it, in
 * TypeScript for turns, summaries and streamed replies, and in SQL for search and indexing.
 *
 * The rule: an agent's turn written while its conversation had one participant
 * (MessageEntity.answeredAlone; always its starter's) was made with what only they may see
 * (their memories, profile, private facts), so it is withheld from every other participant,
 * and so is whatever is made of it: a summary covering it, its words in search statistics, and
 * its place as the indexed context of the turn after it. What any reply was given (its
 * generation) is for the participant it answered.
 */

/** What another participant reads of an agent's turn made for one participant alone. */
export const WITHHELD_REPLY =
  'A reply written for another participant alone, before others were brought in: it is theirs to read.';
const WITHHELD_TOKENS = countTokens(WITHHELD_REPLY);

/** An agent's turn made for another participant alone: not `viewerId`'s to read. */
export function withheldFrom(
  message: { answeredAlone: boolean; userId: string },
  viewerId: string,
): boolean {
  return message.answeredAlone && message.userId !== viewerId;
}

/** A turn as `viewerId` may read it: a withheld one says so and nothing else. */
export function asReadBy<
  M extends {
    answeredAlone: boolean;
    userId: string;
    content: string;
    tokenCount: number;
    metadata: Record<string, unknown>;
  },
>(message: M, viewerId: string): M {
  if (!withheldFrom(message, viewerId)) return message;
  return { ...message, content: WITHHELD_REPLY, tokenCount: WITHHELD_TOKENS, metadata: {} };
}

/**
 * A summary that covers a turn made for its starter alone (`answeredAlone`, coversAnsweredAloneSql)
 * is withheld from others as that turn is.
 */
export function chunkWithheldFrom(
  chunk: { answeredAlone?: boolean; userId: string },
  viewerId: string,
): boolean {
  return withheldFrom(
    { answeredAlone: chunk.answeredAlone === true, userId: chunk.userId },
    viewerId,
  );
}

/**
 * A streamed piece of a reply as `viewerId` may receive it, or null: withheld as its stored
 * turn will be, and dropped when it does not say whom it answers (published by an older
 * instance during a rolling upgrade; its turn still arrives whole, withheld or not).
 */
export function deltaFor<D extends { answeredAlone?: unknown; userId: string }>(
  delta: D,
  viewerId: string,
): D | null {
  if (typeof delta.answeredAlone !== 'boolean') return null;
  return withheldFrom({ answeredAlone: delta.answeredAlone, userId: delta.userId }, viewerId)
    ? null
    : delta;
}

/** What a reply was given (memories, private facts, context items): its participant's alone. */
export function seesGeneration(message: { userId: string }, viewerId: string): boolean {
  return message.userId === viewerId;
}

// ---- SQL ------------------------------------------------------------------------------------
// Aliases are constants in code (spliced with raw); the viewer is bound.

/**
 * The `messages` row `m` is a turn made for one participant alone, withheld from every other:
 * never part of what all participants share (the indexed context of the turn after it).
 */
export function answeredAloneSql(m: string): Sql {
  return sql`${raw(m)}.answered_alone`;
}

/** The `message_segments` row `s` is of a turn the viewer may read. */
export function segmentReadableSql(s: string, viewerId: string): Sql {
  const a = raw(s);
  return sql`(${a}.user_id = ${viewerId} OR NOT EXISTS (
        SELECT 1 FROM messages am WHERE am.id = ${a}.message_id AND am.answered_alone))`;
}

/** The `message_segments` row `s` is of a turn withheld from the viewer: segmentReadableSql's negation. */
export function segmentWithheldSql(s: string, viewerId: string): Sql {
  const a = raw(s);
  return sql`(${a}.user_id <> ${viewerId}
            AND EXISTS (SELECT 1 FROM messages am WHERE am.id = ${a}.message_id AND am.answered_alone))`;
}

/**
 * The summary `k` (with conversation_id, range_start, range_end) covers an agent's turn made for
 * one participant alone. Notices are never summarized, so they withhold nothing.
 */
export function coversAnsweredAloneSql(k: string): Sql {
  const a = raw(k);
  return sql`EXISTS (SELECT 1 FROM messages am WHERE am.conversation_id = ${a}.conversation_id
     AND am.turn_index BETWEEN ${a}.range_start AND ${a}.range_end AND am.answered_alone
     AND NOT am.placeholder)`;
}

/** The `conversation_chunks` row `k` is not withheld from the viewer: chunkWithheldFrom in SQL. */
export function chunkReadableSql(k: string, viewerId: string): Sql {
  return sql`(${raw(k)}.user_id = ${viewerId} OR NOT ${coversAnsweredAloneSql(k)})`;
}
