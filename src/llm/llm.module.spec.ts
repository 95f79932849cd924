import { Test } from '@nestjs/testing';
import { FakeOpenAiServer } from '../../test/support/fake-openai/fake-openai.server.js';
import { loadAppConfig } from '../app.config.js';
import { ConfigModule } from '../config/config.module.js';
import { EMBEDDER, Embedder } from './embedder.js';
import { LANGUAGE_MODEL, LanguageModel } from './language-model.js';
import { LocalEmbedder } from './local-embedder.provider.js';
import { LocalLanguageModel } from './local-llm.provider.js';
import { LoggingUsageRecorder, MODEL_USAGE_RECORDER } from './model-usage.js';
import { LlmModule } from './llm.module.js';
import { OpenAiEmbedder } from './openai-embedder.provider.js';
import { OpenAiLanguageModel } from './openai-llm.provider.js';

async function boot(env: Record<string, string>) {
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(loadAppConfig(env)), LlmModule],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('LlmModule', () => {
  it('provides the offline models by default, and closes the embedder on shutdown', async () => {
    const app = await boot({});
    const embedder = app.get<Embedder>(EMBEDDER);
    expect(embedder).toBeInstanceOf(LocalEmbedder);
    expect(app.get<LanguageModel>(LANGUAGE_MODEL)).toBeInstanceOf(LocalLanguageModel);
    expect(app.get(MODEL_USAGE_RECORDER)).toBeInstanceOf(LoggingUsageRecorder);
    const local = embedder as LocalEmbedder;
    const close = local.close.bind(local);
    let closed = false;
    local.close = async () => {
      closed = true;
      await close();
    };
    await app.close();
    expect(closed).toBe(true);
  });

  it('provides OpenAI-compatible models when configured', async () => {
    const fake = await FakeOpenAiServer.start();
    try {
      const app = await boot({
        LLM: 'openai',
        LLM_BASE_URL: fake.url,
        LLM_MODEL: 'fake-llm',
        EMBEDDINGS: 'openai',
        EMBEDDINGS_BASE_URL: fake.url,
        EMBEDDINGS_MODEL: 'fake-embed',
        EMBEDDINGS_DIMENSIONS: '128',
      });
      const embedder = app.get<Embedder>(EMBEDDER);
      const llm = app.get<LanguageModel>(LANGUAGE_MODEL);
      expect(embedder).toBeInstanceOf(OpenAiEmbedder);
      expect(llm).toBeInstanceOf(OpenAiLanguageModel);
      expect(embedder.dimensions).toBe(128);
      const [vector] = await embedder.embed(['hello']);
      expect(vector).toHaveLength(128);
      const result = await llm.extractMemories({ userTurn: 'I live in Lisbon.' });
      expect(result.memories).toHaveLength(1);
      await app.close();
    } finally {
      await fake.close();
    }
  });

  it('refuses an incomplete openai configuration', async () => {
    await expect(boot({ LLM: 'openai' })).rejects.toThrow(/LLM=openai needs LLM_MODEL/);
  });
});
