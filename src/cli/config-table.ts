import { ALL_VARIABLES } from '../app.config.js';

/** docs/configuration.md's table: every variable, its default and what it does, in src/app.config.ts's order. */
export function configTable(): string {
  const rows = Object.entries(ALL_VARIABLES).map(([name, spec]) => {
    const def = 'default' in spec && spec.default !== undefined ? `\`${spec.default}\`` : '(unset)';
    return `| \`${name}\` | ${def} | ${spec.description.replace(/\|/g, '\\|')} |`;
  });
  return ['| Variable | Default | What it does |', '| --- | --- | --- |', ...rows].join('\n');
}

/** docs/configuration.md whole: printed by `npm run config:table`, never edited by hand. */
export function configDocument(): string {
  return [
    '# Configuration',
    '',
    '<!-- Printed by `npm run config:table` from the declarations in src/*/*.config.ts: edit those, not this file. `npm run docs:check` fails when it differs from them. -->',
    '',
    'Keepsake is configured by environment variables. Every variable is validated at boot; every bad one is listed in a single error and the process exits non-zero. Each module declares its own (`src/<module>/<module>.config.ts`), and this table is printed from those declarations.',
    '',
    'What matters in production is under [Running in production](operations.md#running-in-production); the limits, under [Security model](security.md#limits).',
    '',
    configTable(),
    '',
  ].join('\n');
}
