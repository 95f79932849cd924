import { ArchiveException } from './archive.exception.js';

/**
 * The checks each value of an archive passes before anything is written: its type and size,
 * and what PostgreSQL would refuse with text of its own (a date out of its range, a NUL in
 * text or JSON, half of a UTF-16 pair), so that a family reads Keepsake's sentence naming the
 * file, the line and the field rather than the database's, and the import fails once.
 */

/** A problem with the line `line` (1-based) of `path`, said so. */
export function badLine(path: string, line: number, what: string): ArchiveException {
  return ArchiveException.invalid(`${path}, line ${line}: ${what}`);
}

export type Check = (what: string) => never;

export function checker(path: string, line: number): Check {
  return (what: string) => {
    throw badLine(path, line, what);
  };
}

/** The same check, naming the field's parent first (`legacy.name`, `pages[2].text`). */
export function within(fail: Check, prefix: string): Check {
  return (what: string) => fail(`${prefix}.${what}`);
}

export function obj(v: unknown, fail: Check): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) fail('not a JSON object');
  return v as Record<string, unknown>;
}

export function str(r: Record<string, unknown>, key: string, fail: Check, max: number): string {
  const v = r[key];
  if (typeof v !== 'string') fail(`${key} must be a string`);
  if ((v as string).length > max) fail(`${key} has more than ${max} characters`);
  return v as string;
}

/** A string with something in it besides spaces. */
export function nonEmpty(
  r: Record<string, unknown>,
  key: string,
  fail: Check,
  max: number,
): string {
  const v = str(r, key, fail, max);
  if (v.trim() === '') fail(`${key} is empty`);
  return v;
}

export function optStr(r: Record<string, unknown>, key: string, fail: Check, max: number) {
  return r[key] == null ? null : str(r, key, fail, max);
}

export function num(
  r: Record<string, unknown>,
  key: string,
  fail: Check,
  min: number,
  max: number,
): number {
  const v = r[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    fail(`${key} must be a number from ${min} to ${max}`);
  }
  return v as number;
}

export function int(
  r: Record<string, unknown>,
  key: string,
  fail: Check,
  min = 0,
  max = 2 ** 31 - 1,
) {
  const v = num(r, key, fail, min, max);
  if (!Number.isInteger(v)) fail(`${key} must be a whole number`);
  return v;
}

/**
 * The years a date may have: those of ISO 8601's four digits. PostgreSQL keeps a wider range
 * (4713 BC to 294276 AD) but JavaScript reads one wider still, and nothing a family keeps is
 * dated outside this one.
 */
const YEARS = { min: 1, max: 9999 };

export function date(r: Record<string, unknown>, key: string, fail: Check): string {
  const v = str(r, key, fail, 40);
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) fail(`${key} must be an ISO 8601 date-time`);
  const year = d.getUTCFullYear();
  if (year < YEARS.min || year > YEARS.max) {
    fail(
      `${key} is not a date Keepsake can keep (${JSON.stringify(v.slice(0, 40))}): its year must be from ${YEARS.min} to ${YEARS.max}`,
    );
  }
  return d.toISOString();
}

export function optDate(r: Record<string, unknown>, key: string, fail: Check): string | null {
  return r[key] == null ? null : date(r, key, fail);
}

/** A calendar day, YYYY-MM-DD, that exists (no 13th month, no 30 February). */
export function day(r: Record<string, unknown>, key: string, fail: Check): string {
  const v = str(r, key, fail, 10);
  const d = new Date(`${v}T00:00:00.000Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(v) ||
    Number.isNaN(d.getTime()) ||
    d.toISOString().slice(0, 10) !== v ||
    d.getUTCFullYear() < YEARS.min
  ) {
    fail(`${key} must be a date (YYYY-MM-DD) that exists`);
  }
  return v;
}

export function optDay(r: Record<string, unknown>, key: string, fail: Check): string | null {
  return r[key] == null ? null : day(r, key, fail);
}

export function oneOf<T extends string>(
  r: Record<string, unknown>,
  key: string,
  values: Record<string, T>,
  fail: Check,
): T {
  const v = r[key];
  if (typeof v !== 'string' || !(Object.values(values) as string[]).includes(v)) {
    fail(`${key} must be one of ${Object.values(values).join(', ')}`);
  }
  return v as T;
}

export function strings(
  r: Record<string, unknown>,
  key: string,
  fail: Check,
  max = 1000,
): string[] {
  const v = r[key] ?? [];
  if (!Array.isArray(v) || v.length > max || v.some((s) => typeof s !== 'string')) {
    fail(`${key} must be a list of strings`);
  }
  return (v as string[]).map((s) => s.slice(0, 1000));
}

/** JSON nested deeper than this is refused (a message's metadata is kept as JSON). */
const MAX_DEPTH = 32;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function textProblem(s: string): string | null {
  if (s.includes('\u0000')) {
    return 'holds a NUL character (\\u0000), which no text kept by Keepsake can hold';
  }
  if (LONE_SURROGATE.test(s)) {
    return 'holds half of a character (a lone UTF-16 surrogate): the text is damaged';
  }
  return null;
}

/**
 * Every string of a parsed line, keys included, is text PostgreSQL keeps as it is: no NUL
 * (refused in text and JSON alike) and no half of a UTF-16 pair (refused in JSON, silently
 * replaced in text); nesting is bounded. Fails naming the field (`metadata.note`).
 */
export function plainText(value: unknown, fail: Check): void {
  const walk = (v: unknown, path: string, depth: number): void => {
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) fail(`${path || 'the line'} ${problem}`);
      return;
    }
    if (!v || typeof v !== 'object') return;
    if (depth > MAX_DEPTH) fail(`${path} nests deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${path}[${i}]`, depth + 1));
      return;
    }
    for (const [key, item] of Object.entries(v)) {
      const at = path ? `${path}.${key}` : key;
      const problem = textProblem(key);
      if (problem) fail(`a field name in ${path || 'the line'} ${problem}`);
      walk(item, at, depth + 1);
    }
  };
  walk(value, '', 0);
}
