import { contentTerms, referencesAnyMemory, referencesMemory } from './memory-reference.js';

describe('contentTerms', () => {
  it('keeps distinctive words and Han bigrams, drops stop words and short words', () => {
    expect([...contentTerms('- The user likes Earl Grey tea in the garden')]).toEqual([
      'earl',
      'grey',
      'tea',
      'garden',
    ]);
    expect([...contentTerms('奶奶住在上海')]).toEqual(['奶奶', '奶住', '住在', '在上', '上海']);
  });
});

describe('referencesMemory', () => {
  it('sees a reply that brings the memory back', () => {
    expect(
      referencesMemory(
        'Since Earl Grey is your favourite, maybe brew a pot before we look at the photos?',
        '- I drink Earl Grey tea every morning',
      ),
    ).toBe(true);
    expect(referencesMemory('你奶奶以前住在上海吧？', '- 我奶奶住在上海')).toBe(true);
  });

  it('does not count a reply that shares only common words', () => {
    expect(
      referencesMemory(
        'Tell me more about what you remember of him.',
        '- I drink Earl Grey tea every morning',
      ),
    ).toBe(false);
    expect(referencesMemory('他是一个木匠。', '- 我奶奶住在上海')).toBe(false);
  });

  it('needs only one term of a one-word memory', () => {
    expect(referencesMemory('How is Biscuit doing?', '- Biscuit')).toBe(true);
  });

  it('any of several memories', () => {
    expect(referencesAnyMemory('Is Biscuit still chasing pigeons?', ['- tea', '- Biscuit'])).toBe(
      true,
    );
    expect(referencesAnyMemory('Hello there.', [])).toBe(false);
  });
});
