import sql, { Sql, empty, join, raw } from 'sql-template-tag';

/**
 * The project's one way to bind SQL values: statements are written with the `sql` tag, where
 * every `${value}` is bound as a parameter (`$1`, `$2`, ... numbered when fragments nest) and
 * `raw()` splices SQL text, only ever constants from code (aliases, column lists, literals the
 * planner must see), never input. `join` lists fragments or values; `empty` is no SQL at all.
 */
export { sql, Sql, empty, join, raw };

/** Anything that runs a statement: EntityManager, DataSource and QueryRunner all do. */
export interface Queryable {
  query(query: string, parameters?: unknown[]): Promise<unknown>;
}

/** Rows of an UPDATE/DELETE ... RETURNING: TypeORM answers [rows, count] for those. */
export function returned<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

/**
 * Runs a statement and answers its rows, also for an UPDATE/DELETE ... RETURNING (whose
 * [rows, count] answer is read as the rows). `T` defaults to `any` as TypeORM's `query` does.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function run<T = any>(db: Queryable, statement: Sql): Promise<T[]> {
  return returned<T>(await db.query(statement.text, statement.values));
}

/** Runs an UPDATE or DELETE and answers how many rows it changed. */
export async function affected(db: Queryable, statement: Sql): Promise<number> {
  const result = await db.query(statement.text, statement.values);
  return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
}

/** `text` to match literally inside a LIKE or ILIKE pattern: `%`, `_` and `\` escaped. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
