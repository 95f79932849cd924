import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import type { ModelUsageRecorder } from '../../../src/llm/model-usage.js';
import {
  OpenAiLanguageModel,
  OpenAiLanguageModelOptions,
} from '../../../src/llm/openai-llm.provider.js';
import type { RetryPolicy } from '../../../src/llm/retry.js';
import { FakeOpenAiServer } from './fake-openai.server.js';
import { MemoryUsageRecorder } from './memory-usage.recorder.js';

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

/**
 * The fake server for a describe block: started once, reset before each test, with a fresh
 * usage recorder for each. Read `fake` and `recorder` inside tests (they are set by the hooks).
 */
export function fakeOpenAiPerTest(): {
  readonly fake: FakeOpenAiServer;
  readonly recorder: MemoryUsageRecorder;
} {
  const state: { fake?: FakeOpenAiServer; recorder?: MemoryUsageRecorder } = {};
  beforeAll(async () => {
    state.fake = await FakeOpenAiServer.start();
  });
  afterAll(() => state.fake?.close());
  beforeEach(() => {
    state.fake!.reset();
    state.recorder = new MemoryUsageRecorder();
  });
  return {
    get fake() {
      return state.fake!;
    },
    get recorder() {
      return state.recorder!;
    },
  };
}
