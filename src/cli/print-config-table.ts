/** npm run config:table: the README's configuration table, from the declarations themselves. */
import { ALL_VARIABLES } from '../app.config.js';

const rows = Object.entries(ALL_VARIABLES).map(([name, spec]) => {
  const def = 'default' in spec && spec.default !== undefined ? `\`${spec.default}\`` : '(unset)';
  return `| \`${name}\` | ${def} | ${spec.description.replace(/\|/g, '\\|')} |`;
});
console.log(['| Variable | Default | What it does |', '| --- | --- | --- |', ...rows].join('\n'));
