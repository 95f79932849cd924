import { finite, scoreList } from './context.presenter.js';

describe('scores as clients read them', () => {
  it('never hands GraphQL a number its Float cannot carry', () => {
    expect(finite(-Infinity)).toBe(0);
    expect(finite(Number.NaN)).toBe(0);
    expect(finite(0.25)).toBe(0.25);
    expect(scoreList({ lexical: -Infinity, dense: Number.NaN, final: 0.5 })).toEqual([
      { name: 'lexical', value: 0 },
      { name: 'dense', value: 0 },
      { name: 'final', value: 0.5 },
    ]);
  });
});
