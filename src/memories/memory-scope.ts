import { Sql, raw, sql } from '../database/sql.js';

/**
 * Which memories a member's request may reach: the one place that decides, in TypeScript and in
 * SQL. Memories are their member's alone; a request made in a legacy reaches those about that
 * legacy and those about no legacy in particular (about the member themselves), never those
 * about another legacy. Every repository and search that reads memories for a request asks here.
 */

/** The request's member and the legacy it is made in (null: memories about no legacy only). */
export interface MemoryScope {
  userId: string;
  legacyId: string | null;
}

export function inMemoryScope(
  memory: { userId: string; legacyId: string | null },
  scope: MemoryScope,
): boolean {
  return (
    memory.userId === scope.userId &&
    (memory.legacyId === null || memory.legacyId === scope.legacyId)
  );
}

/** inMemoryScope over the `memories` row `m` (an alias in code), for the member and legacy. */
export function memoryScopeSql(m: string, userId: string, legacyId: string | null): Sql {
  const a = raw(m);
  return sql`${a}.user_id = ${userId} AND (${a}.legacy_id = ${legacyId} OR ${a}.legacy_id IS NULL)`;
}

/** The active memories in scope: what the context and search read. */
export function activeMemoryScopeSql(m: string, userId: string, legacyId: string | null): Sql {
  return sql`${memoryScopeSql(m, userId, legacyId)} AND ${raw(m)}.status = 'ACTIVE'`;
}
