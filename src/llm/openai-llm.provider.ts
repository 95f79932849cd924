import { Logger } from '@nestjs/common';
import OpenAI, { APIError } from 'openai';
import { JsonSchema, toWireSchema, withoutLimits } from './json-schema-lite.js';
import {
  ExtractMemoriesInput,
  ExtractedMemories,
  LanguageModel,
  PeriodSummaryText,
  Reply,
  ReplyInput,
  QueryRewrite,
  RewriteQueryInput,
  SummarizePeriodInput,
  SummarizeTurnsInput,
  TurnsSummary,
  WithCall,
} from './language-model.js';
import { ModelOutputError, ModelUnavailableError } from './model.errors.js';
import {
  MAX_TOOL_ROUNDS,
  ToolCallAccumulator,
  ToolCallOut,
  answerToolCalls,
  rejectsTools,
  toolCallsOf,
  wireTools,
} from './openai-tool-calls.js';
import { LlmTask, ModelCall, ModelUsageRecorder, reportCall } from './model-usage.js';
import {
  AttemptDeadline,
  MalformedResponseError,
  OpenAiEndpointOptions,
  classifyOpenAiError,
  createOpenAiClient,
  describeError,
  toModelError,
  withDeadline,
} from './openai-transport.js';
import {
  ChatPrompt,
  PROMPT_VERSION,
  SCHEMA_NAME,
  extractMemoriesPrompt,
  rewriteQueryPrompt,
  summarizePeriodPrompt,
  summarizeTurnsPrompt,
} from './prompts.js';
import { openAiReplyMessages } from './reply-messages.js';
import { RetriesExhausted, withRetries } from './retry.js';
import {
  AttemptPlan,
  OUTPUT_ATTEMPTS,
  TASK_MAX_TOKENS,
  UsageMeter,
  attemptPlan,
  withRepair,
} from './task-attempts.js';
import {
  MEMORIES_SCHEMA,
  PERIOD_SUMMARY_SCHEMA,
  QUERY_REWRITE_SCHEMA,
  Parsed,
  parseMemories,
  parsePeriodSummary,
  parseQueryRewrite,
  parseTurnsSummary,
  turnsSummarySchema,
} from './task-schemas.js';
import { countTokens } from './tokenizer.js';

export type StructuredOutputMode = 'json_schema' | 'json_object';

export interface OpenAiLanguageModelOptions extends OpenAiEndpointOptions {
  model: string;
  structuredOutput: StructuredOutputMode;
  /** `max_tokens` of a reply (LLM_REPLY_MAX_TOKENS); structured tasks have their own caps. */
  replyMaxTokens: number;
}

/** Optional request parameters a server may refuse; each refused one is dropped for good. */
type SamplingParam = 'temperature' | 'seed' | 'max_tokens' | 'max_completion_tokens';
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** Per-message overhead of the chat format, for estimates when the server reports no usage. */
const TOKENS_PER_MESSAGE = 4;

/**
 * Any OpenAI-compatible /v1/chat/completions endpoint (OpenAI, Ollama, vLLM, llama.cpp,
 * LM Studio). Structured tasks ask for strict `json_schema` output; a server that rejects it
 * is switched to `json_object` for the rest of the process. Answers are validated before use.
 */
export class OpenAiLanguageModel implements LanguageModel {
  readonly modelId: string;
  readonly generates = true;

  private readonly logger = new Logger('OpenAiLanguageModel');
  private readonly client: OpenAI;
  private mode: StructuredOutputMode;
  /** False once a server refused the schema's limits (it then gets the structure alone). */
  private schemaLimits = true;
  private toolsRejected = false;
  private readonly refusedParams = new Set<SamplingParam>();

  constructor(
    private readonly options: OpenAiLanguageModelOptions,
    private readonly recorder: ModelUsageRecorder,
  ) {
    this.modelId = `openai:${options.model}`;
    this.client = createOpenAiClient(options);
    this.mode = options.structuredOutput;
  }

  /** Whether replies offer tools: false once the server rejected them (logged once). */
  get acceptsTools(): boolean {
    return !this.toolsRejected;
  }

  /** `json_object` after a server rejected `json_schema`. */
  get structuredOutputMode(): StructuredOutputMode {
    return this.mode;
  }

  summarizeTurns(input: SummarizeTurnsInput): Promise<WithCall<TurnsSummary>> {
    if (input.turns.length === 0) throw new RangeError('summarizeTurns needs at least one turn');
    return this.structured(
      'summarizeTurns',
      summarizeTurnsPrompt(input),
      SCHEMA_NAME.summarizeTurns,
      turnsSummarySchema(input),
      (raw) => parseTurnsSummary(raw, input),
    );
  }

  extractMemories(input: ExtractMemoriesInput): Promise<WithCall<ExtractedMemories>> {
    return this.structured(
      'extractMemories',
      extractMemoriesPrompt(input),
      SCHEMA_NAME.extractMemories,
      MEMORIES_SCHEMA,
      (raw) => parseMemories(raw, input),
    );
  }

  summarizePeriod(input: SummarizePeriodInput): Promise<WithCall<PeriodSummaryText>> {
    if (input.sources.length === 0) {
      throw new RangeError('summarizePeriod needs at least one source');
    }
    return this.structured(
      'summarizePeriod',
      summarizePeriodPrompt(input),
      SCHEMA_NAME.summarizePeriod,
      PERIOD_SUMMARY_SCHEMA,
      parsePeriodSummary,
    );
  }

  rewriteQuery(input: RewriteQueryInput): Promise<WithCall<QueryRewrite>> {
    return this.structured(
      'rewriteQuery',
      rewriteQueryPrompt(input),
      SCHEMA_NAME.rewriteQuery,
      QUERY_REWRITE_SCHEMA,
      parseQueryRewrite,
    );
  }

  async reply(input: ReplyInput, onDelta?: (text: string) => void): Promise<WithCall<Reply>> {
    // Each member's turn of a together conversation names its author (reply-messages.ts).
    const messages: ChatMessage[] = openAiReplyMessages(input);
    const offered = input.tools ? wireTools(input.tools) : undefined;
    let text = '';
    let promptTokens = 0;
    let completionTokens = 0;
    // Each request is its own retried, recorded call: a retry never runs a tool twice.
    for (let round = 0; ; round++) {
      // After the last round of calls the model is asked to answer without tools.
      const tools = offered && round < MAX_TOOL_ROUNDS ? offered : undefined;
      const { value, call } = await this.run('reply', 1, (ctx) =>
        this.withoutToolsIfRejected(tools, ctx, (t) =>
          onDelta
            ? this.streamOnce(messages, onDelta, ctx, t)
            : this.completeOnce(messages, ctx, t),
        ),
      );
      text += value.text;
      promptTokens += call.promptTokens;
      completionTokens += call.completionTokens;
      if (!tools || value.toolCalls.length === 0) {
        return {
          text,
          model: this.modelId,
          usage: { promptTokens, completionTokens },
          finishReason: value.finishReason,
          call: { ...call, promptTokens, completionTokens },
        };
      }
      await answerToolCalls(messages, value.text, value.toolCalls, input.tools!);
    }
  }

  /**
   * Sends with the tools unless the server refused them before; a server that rejects them now
   * (400 or 422 naming tools) gets the request again without, and no tools from then on.
   */
  private async withoutToolsIfRejected<T>(
    tools: OpenAI.Chat.Completions.ChatCompletionTool[] | undefined,
    ctx: AttemptContext,
    send: (tools: OpenAI.Chat.Completions.ChatCompletionTool[] | undefined) => Promise<T>,
  ): Promise<T> {
    if (!tools || this.toolsRejected) return send(undefined);
    try {
      return await send(tools);
    } catch (err) {
      if (!rejectsTools(err)) throw err;
      this.toolsRejected = true;
      this.logger.warn(
        `${this.modelId} rejected tools (${describeError(err)}); replies offer none from now on`,
      );
      ctx.countRequest();
      return send(undefined);
    }
  }

  private async structured<T extends object>(
    task: Exclude<LlmTask, 'reply'>,
    prompt: ChatPrompt,
    schemaName: string,
    schema: JsonSchema,
    parse: (raw: string) => Parsed<T>,
  ): Promise<WithCall<T>> {
    const { value, call } = await this.run(task, OUTPUT_ATTEMPTS, async (ctx, plan) => {
      const asked = withRepair(prompt, plan);
      const completion = await this.createStructured(task, asked, schemaName, schema, ctx, plan);
      const { content, finishReason, usage } = readCompletion(completion);
      ctx.spend(usage, { prompt: asked, content });
      const details = { task, model: this.modelId, attempts: ctx.requests() };
      const refusal = completion.choices[0]?.message?.refusal;
      if (refusal) {
        throw new ModelOutputError(`${this.modelId} refused: ${refusal}`, details, [], refusal);
      }
      if (finishReason === 'length') {
        throw new ModelOutputError(
          `${this.modelId} stopped at its token limit before finishing the JSON`,
          details,
          [`$: cut at ${TASK_MAX_TOKENS[task]} tokens: write a shorter answer, no item twice`],
          content.slice(0, 300),
        );
      }
      const parsed = parse(content);
      if (!parsed.ok) {
        throw new ModelOutputError(
          `${this.modelId} ${task} output is invalid (${parsed.reason}): ${parsed.problems.slice(0, 3).join('; ')}`,
          details,
          parsed.problems,
          parsed.excerpt,
        );
      }
      if (parsed.dropped?.length) {
        this.logger.debug({ msg: 'model output items left out', task, dropped: parsed.dropped });
      }
      return parsed.value;
    });
    return { ...value, call };
  }

  /**
   * Sends a structured request with the whole schema. A server that refuses it is asked again
   * with the schema's structure alone (the validator still enforces the limits), and one that
   * refuses json_schema altogether is switched to json_object, each for the rest of the process.
   */
  private async createStructured(
    task: Exclude<LlmTask, 'reply'>,
    prompt: ChatPrompt,
    schemaName: string,
    schema: JsonSchema,
    ctx: AttemptContext,
    plan: AttemptPlan,
  ): Promise<OpenAI.Chat.Completions.ChatCompletion> {
    const send = (mode: StructuredOutputMode) => {
      const wire = this.schemaLimits ? toWireSchema(schema) : withoutLimits(schema);
      // json_object mode cannot carry the schema, so the prompt does.
      const system =
        mode === 'json_schema'
          ? prompt.system
          : `${prompt.system}\n\nThe JSON must conform to this JSON Schema:\n${JSON.stringify(toWireSchema(schema))}`;
      const response_format: OpenAI.Chat.Completions.ChatCompletionCreateParams['response_format'] =
        mode === 'json_schema'
          ? { type: 'json_schema', json_schema: { name: schemaName, strict: true, schema: wire } }
          : { type: 'json_object' };
      return this.withSampling(ctx, plan, TASK_MAX_TOKENS[task], (sampling) =>
        withDeadline(this.options.timeoutMs, (deadline) =>
          this.client.chat.completions.create(
            {
              model: this.options.model,
              messages: [
                { role: 'system', content: system },
                { role: 'user', content: prompt.user },
              ],
              response_format,
              ...sampling,
            },
            { signal: deadline.signal },
          ),
        ),
      );
    };
    for (;;) {
      const mode = this.mode;
      try {
        return await send(mode);
      } catch (err) {
        if (mode !== 'json_schema' || !rejectsJsonSchema(err)) throw err;
        if (this.schemaLimits) {
          this.schemaLimits = false;
          this.logger.warn(
            `${this.modelId} refused the JSON schema's limits (${describeError(err)}); sending its structure alone from now on`,
          );
        } else {
          this.mode = 'json_object';
          this.logger.warn(
            `${this.modelId} rejected response_format json_schema (${describeError(err)}); using json_object from now on`,
          );
        }
        ctx.countRequest();
      }
    }
  }

  /**
   * The token cap, and on a repeated attempt the temperature and seed, as request parameters.
   * A server that refuses one (400 or 422 naming it) is asked again without it, and never sent
   * it again; `max_tokens` refused gives way to `max_completion_tokens` (OpenAI's newer models).
   */
  private async withSampling<T>(
    ctx: AttemptContext,
    plan: AttemptPlan | null,
    maxTokens: number,
    send: (params: Partial<Record<SamplingParam, number>>) => Promise<T>,
  ): Promise<T> {
    for (;;) {
      const params: Partial<Record<SamplingParam, number>> = {};
      const tokens = this.refusedParams.has('max_tokens') ? 'max_completion_tokens' : 'max_tokens';
      if (!this.refusedParams.has(tokens)) params[tokens] = maxTokens;
      if (plan?.temperature !== undefined && !this.refusedParams.has('temperature')) {
        params.temperature = plan.temperature;
      }
      if (plan?.seed !== undefined && !this.refusedParams.has('seed')) params.seed = plan.seed;
      try {
        return await send(params);
      } catch (err) {
        const param = refusedParam(err, Object.keys(params) as SamplingParam[]);
        if (!param) throw err;
        this.refusedParams.add(param);
        this.logger.warn(
          `${this.modelId} refused the ${param} parameter (${describeError(err)}); not sending it from now on`,
        );
        ctx.countRequest();
      }
    }
  }

  private async completeOnce(
    messages: ChatMessage[],
    ctx: AttemptContext,
    tools?: OpenAI.Chat.Completions.ChatCompletionTool[],
  ): Promise<ReplyText> {
    // A copy: the conversation grows with tool results after this request is sent.
    const sent = [...messages];
    const completion = await this.withSampling(ctx, null, this.options.replyMaxTokens, (sampling) =>
      withDeadline(this.options.timeoutMs, (deadline) =>
        this.client.chat.completions.create(
          { model: this.options.model, messages: sent, ...(tools ? { tools } : {}), ...sampling },
          { signal: deadline.signal },
        ),
      ),
    );
    const toolCalls = tools ? toolCallsOf(completion.choices?.[0]?.message) : [];
    const { content, finishReason, usage } =
      toolCalls.length > 0
        ? { ...readUsageOnly(completion), content: completion.choices[0].message.content ?? '' }
        : readCompletion(completion, true);
    ctx.spend(usage, { messages: sent, content });
    return { text: content, finishReason, toolCalls };
  }

  private async streamOnce(
    messages: ChatMessage[],
    onDelta: (text: string) => void,
    ctx: AttemptContext,
    tools?: OpenAI.Chat.Completions.ChatCompletionTool[],
  ): Promise<ReplyText> {
    const sent = [...messages];
    const calls = new ToolCallAccumulator();
    let text = '';
    let finishReason: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    try {
      await withDeadline(this.options.timeoutMs, async (deadline: AttemptDeadline) => {
        const stream = await this.withSampling(ctx, null, this.options.replyMaxTokens, (sampling) =>
          this.client.chat.completions.create(
            {
              model: this.options.model,
              messages: sent,
              stream: true,
              stream_options: { include_usage: true },
              ...(tools ? { tools } : {}),
              ...sampling,
            },
            { signal: deadline.signal },
          ),
        );
        for await (const chunk of stream) {
          deadline.touch();
          if (chunk.usage) usage = chunk.usage;
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          calls.add(choice.delta?.tool_calls);
          const delta = choice.delta?.content;
          if (delta) {
            text += delta;
            onDelta(delta);
          }
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
        // The SDK ends the iteration quietly on an abort or an early close: only a
        // finish_reason proves the model finished.
        if (!finishReason)
          throw new MalformedResponseError('the stream ended before the model finished');
      });
    } catch (err) {
      // What the server generated before the break was spent all the same.
      if (text.length > 0 || usage) {
        ctx.spend(usage ? fromUsage(usage) : undefined, { messages: sent, content: text });
      }
      // Text already handed to onDelta cannot be taken back, so a broken stream is not retried.
      if (text.length > 0) {
        throw new ModelUnavailableError(
          `${this.modelId} reply stream broke after ${text.length} characters: ${describeError(err)}`,
          { task: 'reply', model: this.modelId, attempts: ctx.requests(), cause: err },
        );
      }
      throw err;
    }
    ctx.spend(usage ? fromUsage(usage) : undefined, { messages: sent, content: text });
    return { text, finishReason: finishReason ?? 'stop', toolCalls: calls.result };
  }

  /**
   * Retries, repairs, usage accounting and recording shared by every task. Transport failures
   * (429, 5xx, timeouts) are retried as they are; a refused answer (invalid, ungrounded, cut at
   * the token cap) is asked again up to `outputAttempts` times, each time differently
   * (task-attempts.ts). The call is recorded once with the usage of every request it made.
   */
  private async run<T>(
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
        model: this.modelId,
        promptTokens: meter.promptTokens,
        completionTokens: meter.completionTokens,
        durationMs: Math.round(performance.now() - started),
        attempts: requests,
        ok: error === undefined,
        error,
        promptVersion: PROMPT_VERSION[task],
        usageEstimated: meter.estimated,
      };
      reportCall(this.recorder, call);
      return call;
    };
    let refused: ModelOutputError | undefined;
    for (let n = 1; ; n++) {
      const plan = attemptPlan(n, refused);
      try {
        const { value } = await withRetries(
          this.options.retry,
          () => {
            requests++;
            return attempt(ctx, plan);
          },
          classifyOpenAiError,
        );
        return { value, call: record() };
      } catch (err) {
        const error =
          err instanceof RetriesExhausted ? toModelError(err, task, this.modelId, requests) : err;
        if (error instanceof ModelOutputError && n < outputAttempts) {
          this.logger.warn({
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
}

interface AttemptContext {
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
interface UsageSource {
  prompt?: ChatPrompt;
  messages?: ChatMessage[];
  content: string;
}

interface ReplyText {
  text: string;
  finishReason: string;
  /** Function calls the model made instead of (or after some) text. */
  toolCalls: ToolCallOut[];
}

function fromUsage(usage: OpenAI.CompletionUsage): {
  promptTokens: number;
  completionTokens: number;
} {
  return { promptTokens: usage.prompt_tokens ?? 0, completionTokens: usage.completion_tokens ?? 0 };
}

function estimateUsage(from: UsageSource): { promptTokens: number; completionTokens: number } {
  const texts = from.prompt
    ? [from.prompt.system, from.prompt.user]
    : (from.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : ''));
  const promptTokens = texts.reduce((n, t) => n + countTokens(t) + TOKENS_PER_MESSAGE, 0);
  return { promptTokens, completionTokens: countTokens(from.content) };
}

/** The first choice's text, or MalformedResponseError when the body is not a chat completion. */
function readCompletion(
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
function readUsageOnly(completion: OpenAI.Chat.Completions.ChatCompletion): {
  finishReason: string;
  usage?: { promptTokens: number; completionTokens: number };
} {
  return {
    finishReason: completion.choices[0]?.finish_reason ?? 'tool_calls',
    usage: completion.usage ? fromUsage(completion.usage) : undefined,
  };
}

function rejectsJsonSchema(err: unknown): boolean {
  return (
    err instanceof APIError &&
    (err.status === 400 || err.status === 422) &&
    /response_format|json_schema|structured output|schema/i.test(describeError(err))
  );
}

/** The optional parameter a 400 or 422 names, among those sent, or null. */
function refusedParam(err: unknown, sent: SamplingParam[]): SamplingParam | null {
  if (!(err instanceof APIError) || (err.status !== 400 && err.status !== 422)) return null;
  const named = (err as { param?: unknown }).param;
  if (typeof named === 'string' && (sent as string[]).includes(named)) {
    return named as SamplingParam;
  }
  const said = describeError(err);
  return sent.find((p) => new RegExp(`\\b${p}\\b`).test(said)) ?? null;
}
