/**
 * The current definitions of a module's trigger functions, SQL functions and triggers, by name:
 * each lives in one file of its owner's module (`*.sql.ts`). Migrations never import them (a
 * migration runs the SQL as it was on its day); one that changes a definition writes its full
 * SQL and updates the file. test/integration/sql-definitions.spec.ts compares every definition
 * with the migrated database.
 */
export interface SqlDefinitions {
  /** `CREATE OR REPLACE FUNCTION ...`: the body exactly as the last migration wrote it. */
  functions: Record<string, string>;
  /** `CREATE TRIGGER ...` */
  triggers: Record<string, string>;
}
