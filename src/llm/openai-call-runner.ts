import { Logger } from '@nestjs/common';
import OpenAI from 'openai';
import { ModelOutputError } from './model.errors.js';
import { LlmTask, ModelCall, ModelUsageRecorder, reportCall } from './model-usage.js';
import { classifyOpenAiError, describeError, toModelError } from './openai-transport.js';
import { ChatPrompt, PROMPT_VERSION } from './prompts.js';
import { RetriesExhausted, RetryPolicy, withRetries } from './retry.js';
import { AttemptPlan, UsageMeter, attemptPlan } from './task-attempts.js';
import { countTokens } from './tokenizer.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** Per-message overhead of the chat format, for estimates when the server reports no usage. */
const TOKENS_PER_MESSAGE = 4;

export interface AttemptContext {
  /** Requests made so far in this call. */
  requests: () => number;
  /** Counts an extra request inside one attempt (a resend without what the server refused). */
  countRequest: () => void;
  /** Adds one answered request's usage, or its estimate when the server sent none. */
  spend: (
    usage: { promptTokens: number; completionTokens: number } | undefined,
    from: UsageSource,
  ) => void;
}

/** What to count with the tokenizer when the server reports no usage. */
export interface UsageSource {
  prompt?: ChatPrompt;
  messages?: ChatMessage[];
  content: string;
}

/** Who makes the call, and where it is retried, logged and recorded. */
export interface OpenAiCaller {
  modelId: string;
  retry: RetryPolicy;
  recorder: ModelUsageRecorder;
  logger: Logger;
}

/**
 * Retries, repairs, usage accounting and recording shared by every task. Transport failures
 * (429, 5xx, timeouts) are retried as they are; a refused answer (invalid, ungrounded, cut at
 * the token cap) is asked again up to `outputAttempts` times, each time differently
 * (task-attempts.ts). The call is recorded once with the usage of every request it made.
 */
export async function runOpenAiCall<T>(
  caller: OpenAiCaller,
  task: LlmTask,
  outputAttempts: number,
  attempt: (ctx: AttemptContext, plan: AttemptPlan) => Promise<T>,
): Promise<{ value: T; call: ModelCall }> {
  const started = performance.now();
  const meter = new UsageMeter();
  let requests = 0;
  const ctx: AttemptContext = {
    requests: () => requests,
    countRequest: () => {
      requests++;
    },
    spend: (usage, from) => {
      if (usage) meter.add(usage);
      else meter.add(estimateUsage(from), true);
    },
  };
  const record = (error?: string): ModelCall => {
    const call: ModelCall = {
      task,
      model: caller.modelId,
      promptTokens: meter.promptTokens,
      completionTokens: meter.completionTokens,
      durationMs: Math.round(performance.now() - started),
      attempts: requests,
      ok: error === undefined,
      error,
      promptVersion: PROMPT_VERSION[task],
      usageEstimated: meter.estimated,
    };
    reportCall(caller.recorder, call);
    return call;
  };
  let refused: ModelOutputError | undefined;
  for (let n = 1; ; n++) {
    const plan = attemptPlan(n, refused);
    try {
      const { value } = await withRetries(
        caller.retry,
        () => {
          requests++;
          return attempt(ctx, plan);
        },
        classifyOpenAiError,
      );
      return { value, call: record() };
    } catch (err) {
      const error =
        err instanceof RetriesExhausted ? toModelError(err, task, caller.modelId, requests) : err;
      if (error instanceof ModelOutputError && n < outputAttempts) {
        caller.logger.warn({
          msg: 'model answer refused; asking again',
          task,
          error: error.message,
        });
        refused = error;
        continue;
      }
      record(describeError(error));
      throw error;
    }
  }
}

function estimateUsage(from: UsageSource): { promptTokens: number; completionTokens: number } {
  const texts = from.prompt
    ? [from.prompt.system, from.prompt.user]
    : (from.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : ''));
  const promptTokens = texts.reduce((n, t) => n + countTokens(t) + TOKENS_PER_MESSAGE, 0);
  return { promptTokens, completionTokens: countTokens(from.content) };
}
