import { SqlParams, likeEscape, returned } from './sql-params.js';

describe('binding SQL values', () => {
  it('numbers each value after those given at first', () => {
    const p = new SqlParams('a', 'b');
    expect(p.add('c')).toBe('$3');
    expect(p.add(null)).toBe('$4');
    expect(p.values).toEqual(['a', 'b', 'c', null]);
  });

  it.each([
    ['100%', '100\\%'],
    ['snake_case', 'snake\\_case'],
    ['back\\slash', 'back\\\\slash'],
    ['plain words', 'plain words'],
  ])('escapes %s for LIKE', (text, escaped) => {
    expect(likeEscape(text)).toBe(escaped);
  });

  it('reads the rows of an UPDATE … RETURNING however TypeORM answers', () => {
    const rows = [{ id: 1 }];
    expect(returned([rows, 1])).toBe(rows);
    expect(returned(rows)).toBe(rows);
    expect(returned([])).toEqual([]);
  });
});
