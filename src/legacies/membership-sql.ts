import { Sql, sql } from '../database/sql.js';

/**
 * Membership as a SQL predicate, for the queries of other modules that must filter by it in
 * the database (a page of rows cannot be filtered after the fact): the legacies module's one
 * definition of "is a member", beside LegaciesService.requireMember and memberOf. Either side
 * is a column (raw, a constant in code) or a bound value.
 */
export function isMemberSql(legacyId: Sql, userId: Sql): Sql {
  return sql`EXISTS (SELECT 1 FROM legacy_members lm
                   WHERE lm.legacy_id = ${legacyId} AND lm.user_id = ${userId})`;
}
