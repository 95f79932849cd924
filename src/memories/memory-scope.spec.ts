import { inMemoryScope } from './memory-scope.js';

const scope = { userId: 'ann', legacyId: 'joe' };

describe('which memories a request reaches', () => {
  it.each([
    ['her memory about this legacy', { userId: 'ann', legacyId: 'joe' }, true],
    ['her memory about no legacy in particular', { userId: 'ann', legacyId: null }, true],
    ['her memory about another legacy', { userId: 'ann', legacyId: 'may' }, false],
    ['another member’s memory about this legacy', { userId: 'ben', legacyId: 'joe' }, false],
    ['another member’s memory about no legacy', { userId: 'ben', legacyId: null }, false],
  ])('%s', (_name, memory, reached) => {
    expect(inMemoryScope(memory, scope)).toBe(reached);
  });

  it('reaches only memories about no legacy for a request made in none', () => {
    expect(
      inMemoryScope({ userId: 'ann', legacyId: null }, { userId: 'ann', legacyId: null }),
    ).toBe(true);
    expect(
      inMemoryScope({ userId: 'ann', legacyId: 'joe' }, { userId: 'ann', legacyId: null }),
    ).toBe(false);
  });
});
