import { readFileSync } from 'node:fs';
import { markdownTableRows } from '../../test/support/markdown-tables.js';
import { ALL_VARIABLES } from '../app.config.js';
import { configTable } from './config-table.js';

describe('the configuration table', () => {
  it('is what docs/configuration.md lists (npm run config:table)', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(markdownTableRows(doc)).toEqual(markdownTableRows(configTable()));
  });

  it('has a row for every variable, with its default or (unset)', () => {
    const rows = markdownTableRows(configTable()).slice(1);
    expect(rows.map(([name]) => name)).toEqual(Object.keys(ALL_VARIABLES).map((n) => `\`${n}\``));
    expect(rows.find(([name]) => name === '`PORT`')?.[1]).toBe('`3000`');
    expect(rows.find(([name]) => name === '`DATABASE_URL`')?.[1]).toBe('(unset)');
  });
});
