/**
 * Declarative environment variables. Each module declares its own in `<module>.config.ts` (and
 * adds their types to `Env`, app-config.ts); the application lists them all (src/app.config.ts),
 * boot validates all of them at once, and docs/configuration.md is printed from the same
 * declarations (`npm run config:table`).
 */
import { validateCronExpression } from 'cron';

export class ConfigParseError extends Error {}

export interface VariableSpec<T> {
  description: string;
  /** Used when the variable is unset or empty. Without it the variable is optional. */
  default?: string;
  parse: (raw: string) => T;
}

export type VariableSpecs = Record<string, VariableSpec<unknown>>;

export type ConfigOf<S extends VariableSpecs> = {
  readonly [K in keyof S]: S[K] extends { default: string; parse: (raw: string) => infer T }
    ? T
    : S[K] extends { parse: (raw: string) => infer T }
      ? T | undefined
      : never;
};

export function defineVariables<S extends VariableSpecs>(specs: S): S {
  return specs;
}

export const integer =
  (min: number, max: number) =>
  (raw: string): number => {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigParseError('must be a whole number');
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigParseError(`must be between ${min} and ${max}`);
    return n;
  };

export const decimal =
  (min: number, max: number) =>
  (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === '' || Number.isNaN(n)) throw new ConfigParseError('must be a number');
    if (n < min || n > max) throw new ConfigParseError(`must be between ${min} and ${max}`);
    return n;
  };

export const bool = (raw: string): boolean => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigParseError('must be true or false');
};

export const oneOf =
  <V extends string>(...values: V[]) =>
  (raw: string): V => {
    const v = raw.trim().toLowerCase() as V;
    if (!values.includes(v)) throw new ConfigParseError(`must be one of ${values.join(', ')}`);
    return v;
  };

export const text = (raw: string): string => raw;

export const url = (raw: string): string => {
  try {
    new URL(raw);
  } catch {
    throw new ConfigParseError('must be a URL');
  }
  return raw;
};

export const byteSize = (raw: string): number => {
  const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) throw new ConfigParseError('must be a size such as 500kb or 25mb');
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[
    (m[2] ?? 'b').toLowerCase() as 'b' | 'kb' | 'mb' | 'gb'
  ];
  return Number(m[1]) * unit;
};

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * A duration such as `90s`, `15m`, `24h`, `14d` or `2w` (a bare number is milliseconds), in
 * milliseconds, between `min` and `max` (both written the same way).
 */
export const duration =
  (min: string, max: string) =>
  (raw: string): number => {
    const parse = (value: string): number | null => {
      const m = /^(\d{1,12})\s*(ms|s|m|h|d|w)?$/i.exec(value.trim());
      return m ? Number(m[1]) * DURATION_UNITS_MS[(m[2] ?? 'ms').toLowerCase()] : null;
    };
    const n = parse(raw);
    if (n === null) throw new ConfigParseError('must be a duration such as 90s, 15m, 24h or 14d');
    if (n < parse(min)! || n > parse(max)!) {
      throw new ConfigParseError(`must be between ${min} and ${max}`);
    }
    return n;
  };

/** A cron expression for @nestjs/schedule (five or six fields). */
export const cron = (raw: string): string => {
  const expression = raw.trim();
  if (!validateCronExpression(expression).valid) {
    throw new ConfigParseError('must be a cron expression such as */10 * * * *');
  }
  return expression;
};
