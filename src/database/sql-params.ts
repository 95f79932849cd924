/**
 * Positional parameters for one statement, the project's one way to build SQL with values:
 * `p.add(value)` binds the value and returns its placeholder (`$1`, `$2`, ...).
 */
export class SqlParams {
  readonly values: unknown[] = [];

  constructor(...initial: unknown[]) {
    this.values.push(...initial);
  }

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Rows of an UPDATE/DELETE ... RETURNING: TypeORM answers [rows, count] for those. */
export function returned<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

/** `text` to match literally inside a LIKE or ILIKE pattern: `%`, `_` and `\` escaped. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
