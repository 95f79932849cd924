import type { FactEntity, FactHistoryEntity } from './fact.entity.js';
import { FactAction, FactStatus, FactVisibility } from './fact.enums.js';
import { Sql, raw, sql } from '../database/sql.js';

/**
 * Who may see a fact, and what of it: the one place that decides, in TypeScript for events and
 * single facts and in SQL for lists, search and the agent's context.
 *
 * The rule: nothing another member sees may depend on a fact that member cannot see.
 * - A fact is visible to its author always; to other members while it is shared and not deleted.
 * - Its supersession is part of it only for a viewer who can see the fact that superseded it: a
 *   shared fact superseded by its author's private one stays ACTIVE for the family (no validTo,
 *   no supersededBy, no SUPERSEDED history entry) until the newer fact is shared.
 * - Mentions are the author's: every conversation is private to its member, so the family sees
 *   the count the fact had when its author shared it (`shared_mention_count`), never MENTIONED
 *   history entries, and no event when the author mentions it again.
 * - Where a fact was said (conversation, turns, sources) is its author's alone.
 */

/**
 * A viewer who is no member's id: facts as any plain member sees those they did not write (the
 * console's preview of what the family sees, for a fact's own author too).
 */
export const FAMILY_VIEWER = '00000000-0000-0000-0000-000000000000';

/** Whose view a list of facts is: the caller's, or the family's when they ask for it. */
export function listViewer(userId: string, asFamily: boolean | null | undefined): string {
  return asFamily ? FAMILY_VIEWER : userId;
}

/** The state of a fact that decides who sees it. */
export interface FactVisibilityState {
  authorId: string;
  visibility: FactVisibility;
  status: FactStatus;
}

/**
 * Whether the viewer may see where a fact was said (its conversation, turns, sources and their
 * metadata): its author only, whatever its visibility.
 */
export function seesSources(fact: { authorId: string }, viewerId: string): boolean {
  return fact.authorId === viewerId;
}

/** The fields of a fact that decide who sees it. */
export function visibilityState(fact: FactVisibilityState): FactVisibilityState {
  return { authorId: fact.authorId, visibility: fact.visibility, status: fact.status };
}

/**
 * Whether the family (every member but its author) sees the fact: shared and not deleted. The
 * trigger functions of fact-triggers.sql.ts test the same, in plpgsql as their migration wrote it.
 */
export function seenByFamily(fact: Pick<FactVisibilityState, 'visibility' | 'status'>): boolean {
  return fact.visibility === FactVisibility.SHARED && fact.status !== FactStatus.DELETED;
}

export function canSee(fact: FactVisibilityState, viewerId: string): boolean {
  return fact.authorId === viewerId || seenByFamily(fact);
}

/**
 * Whether the viewer may find the fact to restore it: they can see it, or they deleted it while
 * it was shared (an owner or admin undoing their delete of another member's fact).
 */
export function canFindToRestore(
  fact: FactVisibilityState & { deletedBy: string | null },
  viewerId: string,
): boolean {
  const deletedByViewer =
    fact.status === FactStatus.DELETED &&
    fact.deletedBy === viewerId &&
    fact.visibility === FactVisibility.SHARED;
  return canSee(fact, viewerId) || deletedByViewer;
}

/**
 * The fact as `viewerId` sees it (call only when `canSee`). `superseder` is the state of the
 * fact that superseded it, if any.
 */
export function asSeenBy(
  fact: FactEntity,
  superseder: FactVisibilityState | null,
  viewerId: string,
): FactEntity {
  if (fact.authorId === viewerId) return fact;
  const hidden =
    fact.status === FactStatus.SUPERSEDED && !(superseder && canSee(superseder, viewerId));
  return {
    ...fact,
    mentionCount: fact.sharedMentionCount,
    confidence: fact.sharedConfidence,
    updatedAt: fact.sharedUpdatedAt,
    ...(hidden ? { status: FactStatus.ACTIVE, validTo: null, supersededBy: null } : {}),
  };
}

/** What a viewer sees of a fact, to tell whether a change changed anything for them. */
export function viewKey(fact: FactEntity | null): string {
  if (!fact) return '';
  return JSON.stringify([
    fact.content,
    fact.category,
    fact.visibility,
    fact.status,
    fact.confidence,
    fact.mentionCount,
    fact.validTo == null ? null : new Date(fact.validTo).getTime(),
    fact.supersededBy,
  ]);
}

/**
 * A history entry as another member sees it, or null when it is not theirs to see: entries made
 * while the fact was private (or marked PRIVATE because they concern a fact the family could not
 * see, or one since purged), mentions, and supersessions by a fact they cannot see.
 * `relatedVisible` tells whether the viewer can see the entry's related fact.
 */
export function historyEntryForOthers(
  entry: FactHistoryEntity,
  relatedVisible: boolean,
  supersessionVisible: boolean,
): FactHistoryEntity | null {
  if (entry.visibility !== FactVisibility.SHARED) return null;
  if (entry.action === FactAction.MENTIONED) return null;
  if (entry.relatedFactId && !relatedVisible) return null;
  const hidden = entry.status === FactStatus.SUPERSEDED && !supersessionVisible;
  return {
    ...entry,
    mentionCount: entry.sharedMentionCount,
    ...(hidden ? { status: FactStatus.ACTIVE } : {}),
  };
}

/** A history entry of `fact` as `viewerId` sees it: its author sees every entry as it is. */
export function historyEntryAsSeenBy(
  entry: FactHistoryEntity,
  fact: { authorId: string },
  viewerId: string,
  relatedVisible: boolean,
  supersessionVisible: boolean,
): FactHistoryEntity | null {
  if (fact.authorId === viewerId) return entry;
  return historyEntryForOthers(entry, relatedVisible, supersessionVisible);
}

// ---- SQL ------------------------------------------------------------------------------------
// `alias` is always a table alias written in code (spliced with raw); the viewer is bound.

/** seenByFamily over the `facts` row `alias`. */
export function familySeesSql(alias: string): Sql {
  const a = raw(alias);
  return sql`(${a}.visibility = 'SHARED' AND ${a}.status <> 'DELETED')`;
}

/** `alias` is visible to the viewer: canSee. */
export function visibleSql(alias: string, viewerId: string): Sql {
  return sql`(${raw(alias)}.author_id = ${viewerId} OR ${familySeesSql(alias)})`;
}

/**
 * The family's mention count once a fact's visibility is set to `visibility` (SQL): the
 * author's count when it is shared, what they saw before otherwise.
 */
export function sharedCountOnVisibilitySql(visibility: Sql, authorCount: Sql, before: Sql): Sql {
  return sql`CASE WHEN ${visibility} = 'SHARED' THEN ${authorCount} ELSE ${before} END`;
}

/** The fact that superseded `alias` exists and the viewer can see it. */
export function supersessionVisibleSql(alias: string, viewerId: string): Sql {
  return sql`EXISTS (SELECT 1 FROM facts sup WHERE sup.id = ${raw(alias)}.superseded_by AND ${visibleSql('sup', viewerId)})`;
}

/** The status the viewer sees. */
export function statusSql(alias: string, viewerId: string): Sql {
  const a = raw(alias);
  return sql`(CASE WHEN ${a}.status = 'SUPERSEDED' AND NOT ${supersessionVisibleSql(alias, viewerId)}
               THEN 'ACTIVE' ELSE ${a}.status END)`;
}

/** The mention count the viewer sees. */
export function mentionCountSql(alias: string, viewerId: string): Sql {
  return forViewerSql(alias, viewerId, 'mention_count', 'shared_mention_count');
}

/** The confidence the viewer sees. */
export function confidenceSql(alias: string, viewerId: string): Sql {
  return forViewerSql(alias, viewerId, 'confidence', 'shared_confidence');
}

/** Active in the viewer's eyes, among the facts they may see: what search and context use. */
export function activeForSql(alias: string, viewerId: string): Sql {
  return sql`${visibleSql(alias, viewerId)} AND ${statusSql(alias, viewerId)} = 'ACTIVE'`;
}

/** The legacy's facts active in the viewer's eyes: what search and the context read. */
export function activeInLegacySql(alias: string, legacyId: string, viewerId: string): Sql {
  return sql`${raw(alias)}.legacy_id = ${legacyId} AND ${activeForSql(alias, viewerId)}`;
}

/** The fact columns (as FactEntity fields) the viewer sees, `f` the alias. */
export function viewerColumnsSql(viewerId: string): Sql {
  const superseded = sql`${statusSql('f', viewerId)} = 'SUPERSEDED'`;
  return sql`f.id, f.legacy_id AS "legacyId", f.author_id AS "authorId", f.category, f.content,
  f.normalized, f.visibility, ${statusSql('f', viewerId)} AS status,
  ${confidenceSql('f', viewerId)} AS confidence,
  f.shared_confidence AS "sharedConfidence",
  ${mentionCountSql('f', viewerId)} AS "mentionCount", f.shared_mention_count AS "sharedMentionCount",
  f.source_conversation_id AS "sourceConversationId", f.source_range_start AS "sourceRangeStart",
  f.source_range_end AS "sourceRangeEnd", f.source_message_ids AS "sourceMessageIds",
  f.valid_from AS "validFrom",
  CASE WHEN ${superseded} OR f.status <> 'SUPERSEDED' THEN f.valid_to END AS "validTo",
  CASE WHEN ${superseded} OR f.status <> 'SUPERSEDED' THEN f.superseded_by END AS "supersededBy",
  f.deleted_at AS "deletedAt", f.deleted_by AS "deletedBy", f.created_at AS "createdAt",
  ${forViewerSql('f', viewerId, 'updated_at', 'shared_updated_at')} AS "updatedAt",
  f.shared_updated_at AS "sharedUpdatedAt"`;
}

/** The author's value of a column, or the one other members see. */
function forViewerSql(alias: string, viewerId: string, own: string, shared: string): Sql {
  const a = raw(alias);
  return sql`(CASE WHEN ${a}.author_id = ${viewerId} THEN ${a}.${raw(own)} ELSE ${a}.${raw(shared)} END)`;
}
