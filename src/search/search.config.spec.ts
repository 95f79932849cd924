import { validateSearchConfig } from './search.config.js';

describe('validateSearchConfig', () => {
  it('refuses the query rewrite without a language model to ask', () => {
    expect(validateSearchConfig({ SEARCH_QUERY_REWRITE: 'on', LLM: 'local' })).toEqual([
      'SEARCH_QUERY_REWRITE=on needs a language model (LLM=openai or embedded): the heuristics have none to ask',
    ]);
    expect(validateSearchConfig({ SEARCH_QUERY_REWRITE: 'on', LLM: 'openai' })).toEqual([]);
    expect(validateSearchConfig({ SEARCH_QUERY_REWRITE: 'on', LLM: 'embedded' })).toEqual([]);
    expect(validateSearchConfig({ SEARCH_QUERY_REWRITE: 'off', LLM: 'local' })).toEqual([]);
  });
});
