import { ConfigValidationError, Env, parseVariables } from '../config/app-config.js';
import { ALL_VARIABLES, loadAppConfig } from '../app.config.js';
import { validateLlmConfig } from './llm.config.js';

describe('models configuration', () => {
  it('defaults to the offline models', () => {
    const { env } = loadAppConfig({});
    expect(env.EMBEDDINGS).toBe('local');
    expect(env.LLM).toBe('local');
    expect(env.LLM_STRUCTURED_OUTPUT).toBe('json_schema');
    expect(env.MODEL_TIMEOUT_MS).toBe(60000);
    expect(env.MODEL_MAX_RETRIES).toBe(3);
    expect(validateLlmConfig(env)).toEqual([]);
  });

  it('parses each variable', () => {
    expect(() => loadAppConfig({ LLM: 'gpt' })).toThrow(ConfigValidationError);
    expect(() => loadAppConfig({ LLM_BASE_URL: 'localhost:11434' })).toThrow(
      /LLM_BASE_URL must be an http/,
    );
    expect(() => loadAppConfig({ EMBEDDINGS_DIMENSIONS: '0' })).toThrow(/between 1 and 16000/);
  });

  it('reports what an openai configuration is missing', () => {
    expect(() => loadAppConfig({ EMBEDDINGS: 'openai', LLM: 'openai' })).toThrow(
      ConfigValidationError,
    );
    const env = parseVariables(ALL_VARIABLES, {
      EMBEDDINGS: 'openai',
      LLM: 'openai',
    }) as unknown as Env;
    expect(validateLlmConfig(env)).toEqual([
      'EMBEDDINGS=openai needs EMBEDDINGS_MODEL',
      'EMBEDDINGS=openai needs EMBEDDINGS_DIMENSIONS (the size of the stored vectors)',
      'EMBEDDINGS=openai needs EMBEDDINGS_BASE_URL or EMBEDDINGS_API_KEY',
      'LLM=openai needs LLM_MODEL',
      'LLM=openai needs LLM_BASE_URL or LLM_API_KEY',
    ]);
    const complete = loadAppConfig({
      EMBEDDINGS: 'openai',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
      EMBEDDINGS_DIMENSIONS: '768',
      EMBEDDINGS_BASE_URL: 'http://localhost:11434/v1',
      LLM: 'openai',
      LLM_MODEL: 'llama3.1',
      LLM_BASE_URL: 'http://localhost:11434/v1',
    });
    expect(validateLlmConfig(complete.env)).toEqual([]);
  });

  it('rejects a vector size the local embedder cannot produce', () => {
    expect(() => loadAppConfig({ EMBEDDINGS_DIMENSIONS: '512' })).toThrow(/384-d vectors/);
    expect(loadAppConfig({ EMBEDDINGS_DIMENSIONS: '384' }).env.EMBEDDINGS_DIMENSIONS).toBe(384);
    const env = parseVariables(ALL_VARIABLES, {
      EMBEDDINGS_LOCAL_MODEL: 'use-lite',
      EMBEDDINGS_DIMENSIONS: '384',
    }) as unknown as Env;
    expect(validateLlmConfig(env)).toEqual([
      'EMBEDDINGS_LOCAL_MODEL=use-lite produces 512-d vectors, but EMBEDDINGS_DIMENSIONS is 384',
    ]);
  });

  it('takes EMBEDDINGS_MODEL_DIR only for a model that has files', () => {
    const env = parseVariables(ALL_VARIABLES, {
      EMBEDDINGS_LOCAL_MODEL: 'use-lite',
      EMBEDDINGS_MODEL_DIR: '/models/e5',
    }) as unknown as Env;
    expect(validateLlmConfig(env)).toEqual([
      'EMBEDDINGS_MODEL_DIR is for a fetched model; EMBEDDINGS_LOCAL_MODEL=use-lite needs no files',
    ]);
  });
});
