import type { ModelUsageRecorder } from '../../../src/llm/model-usage.js';
import {
  OpenAiLanguageModel,
  OpenAiLanguageModelOptions,
} from '../../../src/llm/openai-llm.provider.js';
import type { RetryPolicy } from '../../../src/llm/retry.js';
import type { FakeOpenAiServer } from './fake-openai.server.js';

/** Short, deterministic backoff: retries are tested without waiting seconds. */
export const retry: RetryPolicy = {
  maxRetries: 2,
  baseMs: 20,
  maxDelayMs: 200,
  maxRetryAfterMs: 1000,
  random: () => 0.5,
};

/** An OpenAiLanguageModel talking to the fake server, strict json_schema unless overridden. */
export function openAiModelOn(
  fake: FakeOpenAiServer,
  recorder: ModelUsageRecorder,
  overrides: Partial<OpenAiLanguageModelOptions> = {},
): OpenAiLanguageModel {
  return new OpenAiLanguageModel(
    {
      baseURL: fake.url,
      apiKey: 'test',
      model: 'fake-llm',
      structuredOutput: 'json_schema',
      timeoutMs: 2000,
      retry,
      replyMaxTokens: 512,
      ...overrides,
    },
    recorder,
  );
}
