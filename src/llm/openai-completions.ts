import OpenAI, { APIError } from 'openai';
import { MalformedResponseError, describeError } from './openai-transport.js';

/** Optional request parameters a server may refuse; each refused one is dropped for good. */
export type SamplingParam = 'temperature' | 'seed' | 'max_tokens' | 'max_completion_tokens';

export function fromUsage(usage: OpenAI.CompletionUsage): {
  promptTokens: number;
  completionTokens: number;
} {
  return { promptTokens: usage.prompt_tokens ?? 0, completionTokens: usage.completion_tokens ?? 0 };
}

/** The first choice's text, or MalformedResponseError when the body is not a chat completion. */
export function readCompletion(
  completion: OpenAI.Chat.Completions.ChatCompletion,
  allowRefusal = false,
): {
  content: string;
  finishReason: string;
  usage?: { promptTokens: number; completionTokens: number };
} {
  const choice =
    typeof completion === 'object' && completion !== null && Array.isArray(completion.choices)
      ? completion.choices[0]
      : undefined;
  const message = choice?.message;
  const content = message?.content ?? (allowRefusal ? message?.refusal : undefined);
  if (!choice || typeof content !== 'string') {
    if (message?.refusal) return { content: '', finishReason: 'refusal' };
    throw new MalformedResponseError('the server answered without a message');
  }
  return {
    content,
    finishReason: choice.finish_reason ?? 'stop',
    usage: completion.usage ? fromUsage(completion.usage) : undefined,
  };
}

/** Finish reason and usage of a completion whose message holds tool calls. */
export function readUsageOnly(completion: OpenAI.Chat.Completions.ChatCompletion): {
  finishReason: string;
  usage?: { promptTokens: number; completionTokens: number };
} {
  return {
    finishReason: completion.choices[0]?.finish_reason ?? 'tool_calls',
    usage: completion.usage ? fromUsage(completion.usage) : undefined,
  };
}

export function rejectsJsonSchema(err: unknown): boolean {
  return (
    err instanceof APIError &&
    (err.status === 400 || err.status === 422) &&
    /response_format|json_schema|structured output|schema/i.test(describeError(err))
  );
}

/** The optional parameter a 400 or 422 names, among those sent, or null. */
export function refusedParam(err: unknown, sent: SamplingParam[]): SamplingParam | null {
  if (!(err instanceof APIError) || (err.status !== 400 && err.status !== 422)) return null;
  const named = (err as { param?: unknown }).param;
  if (typeof named === 'string' && (sent as string[]).includes(named)) {
    return named as SamplingParam;
  }
  const said = describeError(err);
  return sent.find((p) => new RegExp(`\\b${p}\\b`).test(said)) ?? null;
}
