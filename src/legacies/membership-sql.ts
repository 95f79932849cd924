/**
 * Membership as a SQL predicate, for the queries of other modules that must filter by it in
 * the database (a page of rows cannot be filtered after the fact): the legacies module's one
 * definition of "is a member", beside LegaciesService.requireMember and memberOf.
 */
export function isMemberSql(legacyIdExpr: string, userIdExpr: string): string {
  return `EXISTS (SELECT 1 FROM legacy_members lm
                   WHERE lm.legacy_id = ${legacyIdExpr} AND lm.user_id = ${userIdExpr})`;
}
