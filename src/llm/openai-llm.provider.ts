import { Logger } from '@nestjs/common';
import OpenAI, { APIError } from 'openai';
import { JsonSchema, toWireSchema } from './json-schema-lite.js';
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
import { RetriesExhausted, withRetries } from './retry.js';
import {
  MEMORIES_SCHEMA,
  PERIOD_SUMMARY_SCHEMA,
  QUERY_REWRITE_SCHEMA,
  Parsed,
  TURNS_SUMMARY_SCHEMA,
  parseMemories,
  parsePeriodSummary,
  parseQueryRewrite,
  parseTurnsSummary,
} from './task-schemas.js';
import { countTokens } from './tokenizer.js';

export type StructuredOutputMode = 'json_schema' | 'json_object';

export interface OpenAiLanguageModelOptions extends OpenAiEndpointOptions {
  model: string;
  structuredOutput: StructuredOutputMode;
}

type Usage = { promptTokens: number; completionTokens: number; estimated: boolean };
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
  private toolsRejected = false;

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
      TURNS_SUMMARY_SCHEMA,
      (raw) => parseTurnsSummary(raw, input),
    );
  }

  extractMemories(input: ExtractMemoriesInput): Promise<WithCall<ExtractedMemories>> {
    return this.structured(
      'extractMemories',
      extractMemoriesPrompt(input),
      SCHEMA_NAME.extractMemories,
      MEMORIES_SCHEMA,
      parseMemories,
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
    const messages: ChatMessage[] = [
      { role: 'system', content: input.system },
      ...input.messages.map((m): ChatMessage => ({
        role: m.role === 'USER' ? 'user' : 'assistant',
        content: m.content,
      })),
    ];
    const offered = input.tools ? wireTools(input.tools) : undefined;
    let text = '';
    let promptTokens = 0;
    let completionTokens = 0;
    // Each request is its own retried, recorded call: a retry never runs a tool twice.
    for (let round = 0; ; round++) {
      // After the last round of calls the model is asked to answer without tools.
      const tools = offered && round < MAX_TOOL_ROUNDS ? offered : undefined;
      const { value, call } = await this.run('reply', (ctx) =>
        this.withoutToolsIfRejected(tools, ctx, (t) =>
          onDelta ? this.streamOnce(messages, onDelta, ctx, t) : this.completeOnce(messages, t),
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
    const { value, call } = await this.run(task, async (ctx) => {
      const completion = await this.createStructured(prompt, schemaName, schema, ctx.countRequest);
      const { content, finishReason, usage } = readCompletion(completion);
      const details = { task, model: this.modelId, attempts: ctx.requests() };
      const refusal = completion.choices[0]?.message?.refusal;
      if (refusal) {
        throw new ModelOutputError(`${this.modelId} refused: ${refusal}`, details, [], refusal);
      }
      if (finishReason === 'length') {
        throw new ModelOutputError(
          `${this.modelId} stopped at its token limit before finishing the JSON`,
          details,
          [],
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
      return { value: parsed.value, usage, estimateFrom: { prompt, content } };
    });
    return { ...value, call };
  }

  /** Sends a structured request, switching to json_object if the server rejects json_schema. */
  private async createStructured(
    prompt: ChatPrompt,
    schemaName: string,
    schema: JsonSchema,
    countRequest: () => void,
  ): Promise<OpenAI.Chat.Completions.ChatCompletion> {
    const send = (mode: StructuredOutputMode) => {
      // json_object mode cannot carry the schema, so the prompt does.
      const system =
        mode === 'json_schema'
          ? prompt.system
          : `${prompt.system}\n\nThe JSON must conform to this JSON Schema:\n${JSON.stringify(toWireSchema(schema))}`;
      const response_format: OpenAI.Chat.Completions.ChatCompletionCreateParams['response_format'] =
        mode === 'json_schema'
          ? {
              type: 'json_schema',
              json_schema: { name: schemaName, strict: true, schema: toWireSchema(schema) },
            }
          : { type: 'json_object' };
      return withDeadline(this.options.timeoutMs, (deadline) =>
        this.client.chat.completions.create(
          {
            model: this.options.model,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: prompt.user },
            ],
            response_format,
          },
          { signal: deadline.signal },
        ),
      );
    };
    const mode = this.mode;
    try {
      return await send(mode);
    } catch (err) {
      if (mode !== 'json_schema' || !rejectsJsonSchema(err)) throw err;
      this.mode = 'json_object';
      this.logger.warn(
        `${this.modelId} rejected response_format json_schema (${describeError(err)}); using json_object from now on`,
      );
      countRequest();
      return await send('json_object');
    }
  }

  private async completeOnce(
    messages: ChatMessage[],
    tools?: OpenAI.Chat.Completions.ChatCompletionTool[],
  ): Promise<AttemptOutput<ReplyText>> {
    // A copy: the conversation grows with tool results after this request is sent.
    const sent = [...messages];
    const completion = await withDeadline(this.options.timeoutMs, (deadline) =>
      this.client.chat.completions.create(
        { model: this.options.model, messages: sent, ...(tools ? { tools } : {}) },
        { signal: deadline.signal },
      ),
    );
    const toolCalls = tools ? toolCallsOf(completion.choices?.[0]?.message) : [];
    const { content, finishReason, usage } =
      toolCalls.length > 0
        ? { ...readUsageOnly(completion), content: completion.choices[0].message.content ?? '' }
        : readCompletion(completion, true);
    return {
      value: { text: content, finishReason, toolCalls },
      usage,
      estimateFrom: { messages: sent, content },
    };
  }

  private async streamOnce(
    messages: ChatMessage[],
    onDelta: (text: string) => void,
    ctx: AttemptContext,
    tools?: OpenAI.Chat.Completions.ChatCompletionTool[],
  ): Promise<AttemptOutput<ReplyText>> {
    const sent = [...messages];
    const calls = new ToolCallAccumulator();
    let text = '';
    let finishReason: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    try {
      await withDeadline(this.options.timeoutMs, async (deadline: AttemptDeadline) => {
        const stream = await this.client.chat.completions.create(
          {
            model: this.options.model,
            messages: sent,
            stream: true,
            stream_options: { include_usage: true },
            ...(tools ? { tools } : {}),
          },
          { signal: deadline.signal },
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
      // Text already handed to onDelta cannot be taken back, so a broken stream is not retried.
      if (text.length > 0) {
        throw new ModelUnavailableError(
          `${this.modelId} reply stream broke after ${text.length} characters: ${describeError(err)}`,
          { task: 'reply', model: this.modelId, attempts: ctx.requests(), cause: err },
        );
      }
      throw err;
    }
    return {
      value: { text, finishReason: finishReason ?? 'stop', toolCalls: calls.result },
      usage: usage ? fromUsage(usage) : undefined,
      estimateFrom: { messages: sent, content: text },
    };
  }

  /** Retries, usage accounting and recording shared by every task. */
  private async run<T>(
    task: LlmTask,
    attempt: (ctx: AttemptContext) => Promise<AttemptOutput<T>>,
  ): Promise<{ value: T; call: ModelCall }> {
    const started = performance.now();
    let requests = 0;
    const ctx: AttemptContext = {
      requests: () => requests,
      countRequest: () => {
        requests++;
      },
    };
    const record = (usage: Usage, error?: string): ModelCall => {
      const call: ModelCall = {
        task,
        model: this.modelId,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        durationMs: Math.round(performance.now() - started),
        attempts: requests,
        ok: error === undefined,
        error,
        promptVersion: PROMPT_VERSION[task],
        usageEstimated: usage.estimated,
      };
      reportCall(this.recorder, call);
      return call;
    };
    try {
      const { value: output } = await withRetries(
        this.options.retry,
        () => {
          requests++;
          return attempt(ctx);
        },
        classifyOpenAiError,
      );
      const usage = output.usage
        ? { ...output.usage, estimated: false }
        : estimateUsage(output.estimateFrom);
      return { value: output.value, call: record(usage) };
    } catch (err) {
      const error =
        err instanceof RetriesExhausted ? toModelError(err, task, this.modelId, requests) : err;
      record({ promptTokens: 0, completionTokens: 0, estimated: true }, describeError(error));
      throw error;
    }
  }
}

interface AttemptContext {
  /** Requests made so far in this call. */
  requests: () => number;
  /** Counts an extra request inside one attempt (the json_object resend). */
  countRequest: () => void;
}

interface ReplyText {
  text: string;
  finishReason: string;
  /** Function calls the model made instead of (or after some) text. */
  toolCalls: ToolCallOut[];
}

interface AttemptOutput<T> {
  value: T;
  usage?: { promptTokens: number; completionTokens: number };
  /** What to count with the tokenizer when the server reports no usage. */
  estimateFrom: { prompt?: ChatPrompt; messages?: ChatMessage[]; content: string };
}

function fromUsage(usage: OpenAI.CompletionUsage): {
  promptTokens: number;
  completionTokens: number;
} {
  return { promptTokens: usage.prompt_tokens ?? 0, completionTokens: usage.completion_tokens ?? 0 };
}

function estimateUsage(from: AttemptOutput<unknown>['estimateFrom']): Usage {
  const texts = from.prompt
    ? [from.prompt.system, from.prompt.user]
    : (from.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : ''));
  const promptTokens = texts.reduce((n, t) => n + countTokens(t) + TOKENS_PER_MESSAGE, 0);
  return { promptTokens, completionTokens: countTokens(from.content), estimated: true };
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
