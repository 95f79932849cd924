import { FakeOpenAiServer } from './fake-openai.server.js';

/**
 * `npm run dev:fake-llm`: the fake OpenAI-compatible server in auto mode, for trying Keepsake
 * end to end without a model. Answers are schema-valid but come from offline heuristics.
 */
const port = Number(process.env.PORT ?? 4010);
const host = process.env.HOST ?? '127.0.0.1';
const server = await FakeOpenAiServer.start({ port, host });

console.log(`Fake OpenAI-compatible server listening on ${server.url}`);
console.log('Point Keepsake at it with:');
console.log(`  LLM=openai LLM_BASE_URL=${server.url} LLM_API_KEY=fake LLM_MODEL=fake-llm`);
console.log(
  `  EMBEDDINGS=openai EMBEDDINGS_BASE_URL=${server.url} EMBEDDINGS_API_KEY=fake EMBEDDINGS_MODEL=fake-embed EMBEDDINGS_DIMENSIONS=512`,
);
console.log('(its embeddings are hashed bags of words: deterministic, not semantic)');

const stop = async () => {
  await server.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
