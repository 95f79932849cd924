import { ConfigOf, ConfigParseError, VariableSpecs } from './config-spec.js';
import { ALL_VARIABLES, CROSS_CHECKS } from './config.registry.js';

export type Env = ConfigOf<typeof ALL_VARIABLES>;

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * The validated configuration, read once at boot. Injected everywhere as `AppConfig`;
 * tests build one with `AppConfig.load({ ...overrides })`.
 */
export class AppConfig {
  private constructor(readonly env: Env) {}

  static load(source: Record<string, string | undefined> = process.env): AppConfig {
    const env = parseVariables(ALL_VARIABLES, source) as Env;
    const problems = CROSS_CHECKS.flatMap((check) => check(env as never));
    if (problems.length > 0) throw new ConfigValidationError(problems);
    return new AppConfig(env);
  }

  get embedded(): boolean {
    return !this.env.DATABASE_URL;
  }
}

export function parseVariables(
  specs: VariableSpecs,
  source: Record<string, string | undefined>,
): Record<string, unknown> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const given = source[name];
    const raw = given === undefined || given.trim() === '' ? spec.default : given;
    if (raw === undefined) {
      out[name] = undefined;
      continue;
    }
    try {
      out[name] = spec.parse(raw);
    } catch (err) {
      const reason = err instanceof ConfigParseError ? err.message : String(err);
      const shown = name.includes('SECRET') || name.includes('KEY') ? '(hidden)' : `"${raw}"`;
      problems.push(`${name} ${reason} (got ${shown})`);
    }
  }
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return out;
}
