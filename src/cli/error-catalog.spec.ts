import { readFileSync } from 'node:fs';
import { markdownTableRows } from '../../test/support/markdown-tables.js';
import { PublicErrorCode, type ReasonTable } from '../common/errors/domain.exception.js';
import { errorTables, reasonRows } from './error-catalog.js';

describe('the error catalog', () => {
  it('is what docs/errors.md lists (npm run errors:table)', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(markdownTableRows(doc)).toEqual(markdownTableRows(errorTables()));
  });

  it('lists every code and the reasons of every module, GraphQL parse and validation included', () => {
    const text = errorTables();
    for (const code of [
      ...Object.values(PublicErrorCode),
      'GRAPHQL_PARSE_FAILED',
      'GRAPHQL_VALIDATION_FAILED',
    ]) {
      expect(text).toContain(`| \`${code}\` |`);
    }
    for (const reason of ['LAST_OWNER', 'INVALID_VARIABLE', 'CROSS_ORIGIN', 'DATABASE_BUSY']) {
      expect(text).toContain(`| \`${reason}\` |`);
    }
  });

  it('refuses a reason that means two codes, and joins the meanings of a shared one', () => {
    const a: ReasonTable<'X'> = { X: { code: PublicErrorCode.NOT_FOUND, means: 'One.' } };
    const b: ReasonTable<'X'> = { X: { code: PublicErrorCode.NOT_FOUND, means: 'Two.' } };
    const c: ReasonTable<'X'> = { X: { code: PublicErrorCode.CONFLICT, means: 'Three.' } };
    expect(reasonRows([a, b])).toEqual([{ reason: 'X', code: 'NOT_FOUND', means: 'One. Two.' }]);
    expect(() => reasonRows([a, c])).toThrow(/X is NOT_FOUND in one module and CONFLICT/);
  });
});
