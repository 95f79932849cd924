import { ConfigValidationError } from './app-config.js';
import { loadAppConfig } from '../app.config.js';

describe('AppConfig', () => {
  it('applies defaults', () => {
    const config = loadAppConfig({});
    expect(config.env.PORT).toBe(3000);
    expect(config.env.DATA_DIR).toBe('./data');
    // Unset: Apollo's convention decides (graphql/introspection.ts).
    expect(config.env.GRAPHQL_INTROSPECTION).toBeUndefined();
    expect(config.env.BODY_LIMIT).toBe(25 * 1024 * 1024);
    expect(config.embedded).toBe(true);
  });

  it('lists every bad variable in one error', () => {
    let error: unknown;
    try {
      loadAppConfig({
        PORT: 'abc',
        DATABASE_URL: 'mysql://x',
        JWT_SECRET: 'short',
        GRAPHQL_INTROSPECTION: 'maybe',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const problems = (error as ConfigValidationError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/PORT must be a whole number/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL must be a postgres:\/\/ URL/);
    expect(problems.join('\n')).toMatch(
      /JWT_SECRET must be at least 32 characters \(got \(hidden\)\)/,
    );
    expect(problems.join('\n')).toMatch(/GRAPHQL_INTROSPECTION must be true or false/);
  });

  it('treats an empty value as unset', () => {
    expect(loadAppConfig({ PORT: '' }).env.PORT).toBe(3000);
  });

  it('checks variables that depend on each other at boot', () => {
    expect(() => loadAppConfig({ LLM: 'openai', EMBEDDINGS: 'openai' })).toThrow(
      /LLM=openai needs LLM_MODEL[\s\S]*EMBEDDINGS=openai needs EMBEDDINGS_MODEL|EMBEDDINGS=openai needs EMBEDDINGS_MODEL[\s\S]*LLM=openai needs LLM_MODEL/,
    );
  });

  it('holds the context budget and the search switches to their ranges', () => {
    expect(loadAppConfig({ CONTEXT_TOKEN_BUDGET: '2000' }).env.CONTEXT_TOKEN_BUDGET).toBe(2000);
    expect(() => loadAppConfig({ CONTEXT_TOKEN_BUDGET: '2001' })).toThrow(/CONTEXT_TOKEN_BUDGET/);
    expect(() => loadAppConfig({ SEARCH_FUSION: 'max' })).toThrow(/SEARCH_FUSION/);
    const off = loadAppConfig({
      SEARCH_HYBRID: 'off',
      SEARCH_CHUNKING: 'off',
      SEARCH_CONTEXT_TURNS: '0',
      SEARCH_WEIGHT_DENSE: '0',
    }).env;
    expect(off).toMatchObject({
      SEARCH_HYBRID: false,
      SEARCH_CHUNKING: false,
      SEARCH_CONTEXT_TURNS: 0,
      SEARCH_WEIGHT_DENSE: 0,
    });
    expect(() => loadAppConfig({ SEARCH_CONTEXT_TURNS: '7' })).toThrow(/SEARCH_CONTEXT_TURNS/);
  });

  it('refuses a PostgreSQL event bus without a PostgreSQL server', () => {
    expect(() => loadAppConfig({ EVENT_BUS: 'postgres' })).toThrow(
      /EVENT_BUS=postgres needs DATABASE_URL/,
    );
    expect(loadAppConfig({}).env.EVENT_BUS).toBe('auto');
  });
});
