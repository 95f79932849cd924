import { byKey, defineLoader, Loaders } from './loaders.js';

describe('Loaders', () => {
  const ROWS = [
    { id: 'a', n: 1 },
    { id: 'b', n: 2 },
  ];

  it('gives every resolver of a request the one loader of a definition, batching their keys', async () => {
    const batches: string[][] = [];
    const BY_ID = defineLoader<string, { id: string; n: number } | null, typeof ROWS>(
      'row.byId',
      (rows) => async (ids) => {
        batches.push([...ids]);
        return byKey(ids, rows, (r) => r.id);
      },
    );
    const loaders = new Loaders();
    const [a, b, missing] = await Promise.all([
      loaders.get(BY_ID, ROWS).load('a'),
      loaders.get(BY_ID, []).load('b'), // deps only build the loader the first time
      loaders.get(BY_ID, ROWS).load('c'),
    ]);
    expect([a?.n, b?.n, missing]).toEqual([1, 2, null]);
    expect(batches).toEqual([['a', 'b', 'c']]);
    // Another request starts empty.
    await new Loaders().get(BY_ID, ROWS).load('a');
    expect(batches).toHaveLength(2);
  });

  it('keeps definitions apart even when their names are the same', async () => {
    const ONE = defineLoader<string, string, null>('same', () => async (ids) => ids.map(() => '1'));
    const TWO = defineLoader<string, string, null>('same', () => async (ids) => ids.map(() => '2'));
    const loaders = new Loaders();
    expect(await loaders.get(ONE, null).load('x')).toBe('1');
    expect(await loaders.get(TWO, null).load('x')).toBe('2');
  });
});
