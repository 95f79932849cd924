import { Logger } from '@nestjs/common';
import OpenAI from 'openai';
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
import { LlmTask, ModelCall, ModelUsageRecorder } from './model-usage.js';
import { AttemptContext, runOpenAiCall } from './openai-call-runner.js';
import {
  SamplingParam,
  fromUsage,
  readCompletion,
  readUsageOnly,
  refusedParam,
  rejectsJsonSchema,
} from './openai-completions.js';
import {
  AttemptDeadline,
  MalformedResponseError,
  OpenAiEndpointOptions,
  createOpenAiClient,
  describeError,
  withDeadline,
} from './openai-transport.js';
import {
  ChatPrompt,
  SCHEMA_NAME,
  extractMemoriesPrompt,
  rewriteQueryPrompt,
  summarizePeriodPrompt,
  summarizeTurnsPrompt,
} from './prompts.js';
import { openAiReplyMessages } from './reply-messages.js';
import { AttemptPlan, OUTPUT_ATTEMPTS, TASK_MAX_TOKENS, withRepair } from './task-attempts.js';
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

export type StructuredOutputMode = 'json_schema' | 'json_object';

export interface OpenAiLanguageModelOptions extends OpenAiEndpointOptions {
  model: string;
  structuredOutput: StructuredOutputMode;
  /** `max_tokens` of a reply (LLM_REPLY_MAX_TOKENS); structured tasks have their own caps. */
  replyMaxTokens: number;
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

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

  private run<T>(
    task: LlmTask,
    outputAttempts: number,
    attempt: (ctx: AttemptContext, plan: AttemptPlan) => Promise<T>,
  ): Promise<{ value: T; call: ModelCall }> {
    const caller = {
      modelId: this.modelId,
      retry: this.options.retry,
      recorder: this.recorder,
      logger: this.logger,
    };
    return runOpenAiCall(caller, task, outputAttempts, attempt);
  }
}

interface ReplyText {
  text: string;
  finishReason: string;
  /** Function calls the model made instead of (or after some) text. */
  toolCalls: ToolCallOut[];
}
