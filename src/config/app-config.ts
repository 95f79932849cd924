import { ConfigOf, ConfigParseError, VariableSpecs } from './config-spec.js';
import { serverVariables } from './config.schema.js';

/**
 * Every setting, typed. The server-wide ones are here; each module adds its own where it
 * declares them, in its `<module>.config.ts`:
 *
 *   declare module '../config/app-config.js' {
 *     interface Env extends ConfigOf<typeof fooVariables> {}
 *   }
 *
 * so the configuration imports no module: the application lists them all (src/app.config.ts).
 */
export interface Env extends ConfigOf<typeof serverVariables> {}

/** A check that spans several variables, run once each has parsed on its own. */
export type CrossCheck = (env: never) => string[];

/** What is validated at boot: every variable of every module, and the checks across them. */
export interface Settings {
  variables: VariableSpecs;
  checks: readonly CrossCheck[];
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * The validated configuration, read once at boot. Injected everywhere as `AppConfig`; the
 * application and its tests build one with `loadAppConfig({ ...overrides })` (src/app.config.ts).
 */
export class AppConfig {
  private constructor(readonly env: Env) {}

  static load(
    settings: Settings,
    source: Record<string, string | undefined> = process.env,
  ): AppConfig {
    const env = parseVariables(settings.variables, source) as unknown as Env;
    const problems = settings.checks.flatMap((check) => check(env as never));
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
