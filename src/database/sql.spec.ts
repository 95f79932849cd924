import { affected, empty, join, likeEscape, raw, returned, run, sql } from './sql.js';

describe('binding SQL values', () => {
  it('numbers the values of nested fragments in the order they appear', () => {
    const scope = (userId: string) => sql`m.user_id = ${userId} AND m.status = ${'ACTIVE'}`;
    const statement = sql`SELECT * FROM memories m WHERE m.id = ${'id-1'} AND ${scope('u-1')} LIMIT ${10}`;
    expect(statement.text).toBe(
      'SELECT * FROM memories m WHERE m.id = $1 AND m.user_id = $2 AND m.status = $3 LIMIT $4',
    );
    expect(statement.values).toEqual(['id-1', 'u-1', 'ACTIVE', 10]);
  });

  it('binds a value used twice as two parameters', () => {
    const viewer = 'u-1';
    const statement = sql`a = ${viewer}::uuid OR b = ${viewer}::uuid`;
    expect(statement.text).toBe('a = $1::uuid OR b = $2::uuid');
    expect(statement.values).toEqual([viewer, viewer]);
  });

  it('binds arrays, null, uuids and dates as values, never as SQL', () => {
    const ids = ['6f1c0c9e-8a4b-4f43-9b9d-5d2f0a3c1e77', "x'); DROP TABLE users; --"];
    const at = new Date('2026-01-02T03:04:05Z');
    const statement = sql`WHERE id = ANY(${ids}::uuid[]) AND legacy_id IS NOT DISTINCT FROM ${null} AND at < ${at}`;
    expect(statement.text).toBe(
      'WHERE id = ANY($1::uuid[]) AND legacy_id IS NOT DISTINCT FROM $2 AND at < $3',
    );
    expect(statement.values).toEqual([ids, null, at]);
    expect(statement.values[0]).toBe(ids);
  });

  it('splices raw SQL without binding it, and empty as nothing', () => {
    const statement = sql`SELECT ${raw('f.id, f.content')} FROM facts f ${empty}WHERE f.id = ${'f-1'}`;
    expect(statement.text).toBe('SELECT f.id, f.content FROM facts f WHERE f.id = $1');
    expect(statement.values).toEqual(['f-1']);
  });

  it('joins fragments with their values renumbered', () => {
    const where = [sql`a = ${1}`, sql`b = ${2}`, raw('c IS NULL')];
    const statement = sql`SELECT 1 WHERE ${join(where, ' AND ')} LIMIT ${3}`;
    expect(statement.text).toBe('SELECT 1 WHERE a = $1 AND b = $2 AND c IS NULL LIMIT $3');
    expect(statement.values).toEqual([1, 2, 3]);
  });

  it('runs a statement with its text and values and answers its rows', async () => {
    const calls: [string, unknown[] | undefined][] = [];
    const rows = [{ id: 1 }];
    const db = {
      query: (text: string, values?: unknown[]) => {
        calls.push([text, values]);
        return Promise.resolve(rows);
      },
    };
    expect(await run(db, sql`SELECT id FROM t WHERE a = ${'x'}`)).toBe(rows);
    expect(calls).toEqual([['SELECT id FROM t WHERE a = $1', ['x']]]);
  });

  it('reads the rows and the count of an UPDATE however TypeORM answers', async () => {
    const rows = [{ id: 1 }];
    const db = { query: () => Promise.resolve([rows, 3]) };
    expect(await run(db, sql`UPDATE t SET a = 1 RETURNING id`)).toBe(rows);
    expect(await affected(db, sql`UPDATE t SET a = 1`)).toBe(3);
    expect(await affected({ query: () => Promise.resolve([]) }, sql`SELECT 1`)).toBe(0);
    expect(returned([rows, 1])).toBe(rows);
    expect(returned(rows)).toBe(rows);
    expect(returned([])).toEqual([]);
  });

  it.each([
    ['100%', '100\\%'],
    ['snake_case', 'snake\\_case'],
    ['back\\slash', 'back\\\\slash'],
    ['plain words', 'plain words'],
  ])('escapes %s for LIKE', (text, escaped) => {
    expect(likeEscape(text)).toBe(escaped);
  });
});
