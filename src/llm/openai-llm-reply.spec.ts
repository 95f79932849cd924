import { reply } from '../../test/support/fake-openai/fake-openai.server.js';
import {
  fakeOpenAiPerTest,
  openAiModelOn,
  retry,
} from '../../test/support/fake-openai/openai-model.fixtures.js';
import { ModelUnavailableError } from './model.errors.js';
import { OpenAiLanguageModelOptions } from './openai-llm.provider.js';
import { countTokens } from './tokenizer.js';

describe('OpenAiLanguageModel.reply against the fake server', () => {
  const openai = fakeOpenAiPerTest();

  const model = (overrides: Partial<OpenAiLanguageModelOptions> = {}) =>
    openAiModelOn(openai.fake, openai.recorder, overrides);

  const input = {
    system: 'You are Keepsake.',
    messages: [{ role: 'USER' as const, content: 'Tell me about Dad.' }],
  };

  it('answers without streaming', async () => {
    const result = await model().reply(input);
    expect(result.text).toMatch(/fake reply/);
    expect(result.model).toBe('openai:fake-llm');
    expect(result.usage.completionTokens).toBeGreaterThan(0);
    const sent = openai.fake.requestsFor('chat')[0].body;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'You are Keepsake.' },
      { role: 'user', content: 'Tell me about Dad.' },
    ]);
    expect(sent.response_format).toBeUndefined();
  });

  it('streams deltas and takes usage from the final chunk', async () => {
    openai.fake.enqueue('chat', reply.stream(['He ', 'was ', 'kind.']));
    const deltas: string[] = [];
    const result = await model().reply(input, (d) => deltas.push(d));
    expect(deltas).toEqual(['He ', 'was ', 'kind.']);
    expect(result.text).toBe('He was kind.');
    expect(result.finishReason).toBe('stop');
    expect(result.call.usageEstimated).toBe(false);
    expect(result.usage.completionTokens).toBe(4);
    expect(openai.fake.requestsFor('chat')[0].body.stream_options).toEqual({ include_usage: true });
  });

  it('fails a stream cut after text was delivered, without retrying', async () => {
    openai.fake.enqueue('chat', reply.stream(['He ', 'was ', 'kind.'], { cutAfter: 2 }));
    const deltas: string[] = [];
    const err = (await model()
      .reply(input, (d) => deltas.push(d))
      .catch((e: unknown) => e)) as ModelUnavailableError;
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err.message).toMatch(/stream broke after 7 characters/);
    expect(deltas).toEqual(['He ', 'was ']);
    expect(openai.fake.requestsFor('chat')).toHaveLength(1);
  });

  it('fails a stream that ends cleanly without finishing', async () => {
    openai.fake.enqueue(
      'chat',
      reply.stream(['He ', 'was ', 'kind.'], { cutAfter: 1, cut: 'end' }),
    );
    await expect(model().reply(input, () => undefined)).rejects.toThrow(
      /ended before the model finished/,
    );
  });

  it('retries a stream cut before any text', async () => {
    openai.fake.enqueue('chat', reply.stream(['x'], { cutAfter: 0 }));
    const result = await model().reply(input, () => undefined);
    expect(result.call.attempts).toBe(2);
    expect(result.text).toMatch(/fake reply/);
  });

  it('times out a stalled stream between chunks', async () => {
    openai.fake.enqueue('chat', reply.stream(['a', 'b'], { chunkDelayMs: 400 }));
    const err = await model({ timeoutMs: 150, retry: { ...retry, maxRetries: 0 } })
      .reply(input, () => undefined)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toMatch(/no answer within 150 ms/);
  });

  it('counts streamed usage with the tokenizer when the server sends none', async () => {
    openai.fake.setHandler('chat', () =>
      reply.stream(['Hello ', 'there, ', 'friend.'], { omitUsage: true }),
    );
    const result = await model().reply(input, () => undefined);
    expect(result.call.usageEstimated).toBe(true);
    expect(result.usage.completionTokens).toBe(countTokens('Hello there, friend.'));
  });
});
