import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import type { JsonSchema } from './json-schema-lite.js';
import {
  ExtractMemoriesInput,
  ExtractedMemories,
  LanguageModel,
  PeriodSummaryText,
  QueryRewrite,
  Reply,
  ReplyInput,
  RewriteQueryInput,
  SummarizePeriodInput,
  SummarizeTurnsInput,
  TurnsSummary,
  WithCall,
} from './language-model.js';
import { ModelOutputError, ModelUnavailableError } from './model.errors.js';
import { LlmTask, ModelCall, ModelUsageRecorder, reportCall } from './model-usage.js';
import {
  ChatPrompt,
  PROMPT_VERSION,
  extractMemoriesPrompt,
  rewriteQueryPrompt,
  summarizePeriodPrompt,
  summarizeTurnsPrompt,
} from './prompts.js';
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
  Parsed,
  QUERY_REWRITE_SCHEMA,
  parseMemories,
  parsePeriodSummary,
  parseQueryRewrite,
  parseTurnsSummary,
  turnsSummarySchema,
} from './task-schemas.js';
import { countTokens, truncateToTokens } from './tokenizer.js';
import { labelledContent } from './reply-messages.js';

export interface EmbeddedModelOptions {
  modelPath: string;
  /** `embedded:<name>-<first 12 hex of its SHA-256>`: a new file is a new id. */
  modelId: string;
  label: string;
  threads: number;
  contextSize: number;
  replyMaxTokens: number;
  /** Structured tasks' token caps, when not TASK_MAX_TOKENS's (tests, measurements). */
  taskMaxTokens?: Partial<Record<Exclude<LlmTask, 'reply'>, number>>;
  /** Told of every request handed to the model, in the order handed (tests, measurements). */
  onRequest?: (request: { lane: 'reply' | 'task'; body: Record<string, unknown> }) => void;
  workerUrl?: URL;
}

/** What the loaded model reports (/health/ready, the log, the README's table). */
export interface EmbeddedModelInfo {
  loadMs: number;
  contextSize: number;
  modelBytes: number;
  memoryBytes: number;
  threads: number;
}

type Lane = 'reply' | 'task';

interface Request {
  id: number;
  lane: Lane;
  body: {
    system: string;
    messages: { role: 'user' | 'assistant'; content: string }[];
    schema: unknown;
    maxTokens: number;
    temperature?: number;
    seed?: number;
    stream: boolean;
  };
  onDelta?: (text: string) => void;
  resolve: (answer: WorkerAnswer) => void;
  reject: (err: Error) => void;
}

interface WorkerAnswer {
  text: string;
  stopReason: string;
  promptTokens: number;
  completionTokens: number;
}

type WorkerMessage =
  | ({ type: 'ready' } & EmbeddedModelInfo)
  | { type: 'fatal'; message: string }
  | { type: 'delta'; id: number; text: string }
  | ({ type: 'done'; id: number } & WorkerAnswer)
  | { type: 'error'; id: number; message: string };

/** How long a closing worker may take to free the model before it is terminated. */
const CLOSE_WAIT_MS = 15_000;

/** Tokens kept free besides the answer: the chat template's own, and the tokenizers' gap. */
const CONTEXT_MARGIN = 96;
/** Our tokenizer (GPT's) and a small model's disagree: budgets leave a quarter spare. */
const TOKENIZER_SLACK = 1.25;

/**
 * The node-llama-cpp grammar for a task's JSON schema, limits included: item counts and string
 * lengths as node-llama-cpp takes them, and what it cannot take written as Keepsake's own
 * constraint: a bounded number becomes the values of a 0.05 grid between its bounds (a
 * confidence cannot be 1.8), an integer with an `enum` (a span's turn numbers) those values.
 */
export function toGrammarSchema(schema: JsonSchema): unknown {
  switch (schema.type) {
    case 'object':
      return {
        type: 'object',
        properties: Object.fromEntries(
          Object.entries(schema.properties).map(([k, v]) => [k, toGrammarSchema(v)]),
        ),
        additionalProperties: false,
      };
    case 'array':
      return {
        type: 'array',
        items: toGrammarSchema(schema.items),
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
      };
    case 'string':
      if (schema.enum) return { enum: [...schema.enum] };
      return {
        type: 'string',
        ...(schema.minLength !== undefined ? { minLength: schema.minLength } : {}),
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength } : {}),
      };
    case 'integer':
    case 'number': {
      if (schema.enum) return { enum: [...schema.enum] };
      const { minimum: min, maximum: max } = schema;
      if (min !== undefined && max !== undefined) {
        const step = schema.type === 'integer' ? 1 : 0.05;
        const count = Math.floor((max - min) / step + 1e-9) + 1;
        if (count <= 201) {
          return {
            enum: Array.from({ length: count }, (_, i) => Number((min + i * step).toFixed(2))),
          };
        }
      }
      return { type: schema.type };
    }
    case 'boolean':
      return { type: 'boolean' };
  }
}

/**
 * LLM=embedded: a GGUF instruct model run in the service's process by node-llama-cpp, in a
 * worker thread. One loaded model serves everything, one request at a time, replies before
 * background tasks (a summary waiting never delays someone's answer by more than the request
 * in flight). Structured tasks are generated under their full JSON schema as a grammar, then
 * validated and grounded like any model's answer; a refused answer is asked again differently.
 */
export class EmbeddedLanguageModel implements LanguageModel {
  readonly modelId: string;
  readonly generates = true;
  /** Small local models do not call tools reliably: memory commands go by their patterns. */
  readonly acceptsTools = false;
  info: EmbeddedModelInfo | null = null;

  private readonly logger = new Logger('EmbeddedLanguageModel');
  private readonly workerUrl: URL;
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  private readonly lanes: Record<Lane, Request[]> = { reply: [], task: [] };
  private inFlight: Request | null = null;
  private loading = false;
  private nextId = 1;

  constructor(
    private readonly options: EmbeddedModelOptions,
    private readonly recorder: ModelUsageRecorder,
  ) {
    this.modelId = options.modelId;
    this.workerUrl = options.workerUrl ?? new URL('./embedded-llm.worker.mjs', import.meta.url);
  }

  /** Loads the model now rather than on the first call. */
  async warmUp(): Promise<EmbeddedModelInfo> {
    await this.start();
    return this.info!;
  }

  /**
   * Stops the model: what waits is failed, what runs is stopped, and the worker frees the model
   * and ends itself (terminating it while llama.cpp runs would abort the process); terminated
   * only if it has not ended after CLOSE_WAIT_MS.
   */
  async close(): Promise<void> {
    const worker = this.worker;
    this.reset(this.unavailable('the embedded model was closed', 'reply'));
    if (!worker) return;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    const timer = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
    await ended;
    clearTimeout(timer);
  }

  summarizeTurns(input: SummarizeTurnsInput): Promise<WithCall<TurnsSummary>> {
    if (input.turns.length === 0) throw new RangeError('summarizeTurns needs at least one turn');
    return this.structured(
      'summarizeTurns',
      summarizeTurnsPrompt(input),
      turnsSummarySchema(input),
      (raw) => parseTurnsSummary(raw, input),
    );
  }

  extractMemories(input: ExtractMemoriesInput): Promise<WithCall<ExtractedMemories>> {
    return this.structured(
      'extractMemories',
      extractMemoriesPrompt(input),
      MEMORIES_SCHEMA,
      (raw) => parseMemories(raw, input),
    );
  }

  summarizePeriod(input: SummarizePeriodInput): Promise<WithCall<PeriodSummaryText>> {
    if (input.sources.length === 0)
      throw new RangeError('summarizePeriod needs at least one source');
    return this.structured(
      'summarizePeriod',
      summarizePeriodPrompt(input),
      PERIOD_SUMMARY_SCHEMA,
      parsePeriodSummary,
    );
  }

  rewriteQuery(input: RewriteQueryInput): Promise<WithCall<QueryRewrite>> {
    return this.structured(
      'rewriteQuery',
      rewriteQueryPrompt(input),
      QUERY_REWRITE_SCHEMA,
      parseQueryRewrite,
    );
  }

  async reply(input: ReplyInput, onDelta?: (text: string) => void): Promise<WithCall<Reply>> {
    const started = performance.now();
    const maxTokens = this.options.replyMaxTokens;
    const { system, messages } = this.fitReply(input, maxTokens);
    try {
      const answer = await this.enqueue(
        'reply',
        {
          system,
          messages,
          schema: null,
          maxTokens,
          // A little variety: at 0 small models loop on their own words.
          temperature: 0.6,
          seed: Math.floor(Math.random() * 2 ** 31),
          stream: onDelta !== undefined,
        },
        onDelta,
        input.signal,
      );
      const finishReason = finishReasonOf(answer.stopReason);
      const call = this.record('reply', started, answer, 1);
      return {
        text: answer.text,
        model: this.modelId,
        usage: { promptTokens: answer.promptTokens, completionTokens: answer.completionTokens },
        finishReason,
        call,
      };
    } catch (err) {
      this.record('reply', started, { promptTokens: 0, completionTokens: 0 }, 1, err);
      throw err;
    }
  }

  private async structured<T extends object>(
    task: Exclude<LlmTask, 'reply'>,
    prompt: ChatPrompt,
    schema: JsonSchema,
    parse: (raw: string) => Parsed<T>,
  ): Promise<WithCall<T>> {
    const started = performance.now();
    const meter = new UsageMeter();
    const grammar = toGrammarSchema(schema);
    const maxTokens = this.options.taskMaxTokens?.[task] ?? TASK_MAX_TOKENS[task];
    let refused: ModelOutputError | undefined;
    for (let n = 1; ; n++) {
      const plan: AttemptPlan = attemptPlan(n, refused);
      try {
        const asked = this.fitPrompt(withRepair(prompt, plan), maxTokens);
        const answer = await this.enqueue('task', {
          system: asked.system,
          messages: [{ role: 'user', content: asked.user }],
          schema: grammar,
          maxTokens,
          temperature: plan.temperature,
          seed: plan.seed,
          stream: false,
        });
        meter.add(answer);
        const details = { task, model: this.modelId, attempts: n };
        if (answer.stopReason === 'maxTokens') {
          throw new ModelOutputError(
            `${this.modelId} stopped at its token limit before finishing the JSON`,
            details,
            [`$: cut at ${maxTokens} tokens: write a shorter answer, no item twice`],
            answer.text.slice(0, 300),
          );
        }
        const parsed = parse(answer.text);
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
        return { ...parsed.value, call: this.record(task, started, meter, n) };
      } catch (err) {
        if (err instanceof ModelOutputError && n < OUTPUT_ATTEMPTS) {
          this.logger.warn({ msg: 'model answer refused; asking again', task, error: err.message });
          refused = err;
          continue;
        }
        this.record(task, started, meter, n, err);
        throw err;
      }
    }
  }

  /** The prompt cut to what the context holds beside the answer; a cut is marked. */
  private fitPrompt(prompt: ChatPrompt, maxTokens: number): ChatPrompt {
    const budget = Math.floor(
      (this.options.contextSize - maxTokens - CONTEXT_MARGIN) / TOKENIZER_SLACK,
    );
    const room = budget - countTokens(prompt.system);
    if (countTokens(prompt.user) <= room) return prompt;
    return {
      system: prompt.system,
      user: `${truncateToTokens(prompt.user, Math.max(64, room - 8))} […]`,
    };
  }

  /** The reply's recent turns, oldest dropped first, to what the context holds. */
  private fitReply(
    input: ReplyInput,
    maxTokens: number,
  ): { system: string; messages: Request['body']['messages'] } {
    const budget = Math.floor(
      (this.options.contextSize - maxTokens - CONTEXT_MARGIN) / TOKENIZER_SLACK,
    );
    const messages = input.messages.map((m) => ({
      role: m.role === 'USER' ? ('user' as const) : ('assistant' as const),
      content: labelledContent(m),
    }));
    let system = input.system;
    if (countTokens(system) > budget / 2)
      system = `${truncateToTokens(system, Math.floor(budget / 2))} […]`;
    let used = countTokens(system) + messages.reduce((n, m) => n + countTokens(m.content) + 4, 0);
    while (messages.length > 1 && used > budget) {
      used -= countTokens(messages[0].content) + 4;
      messages.shift();
    }
    if (used > budget && messages.length === 1) {
      messages[0].content = truncateToTokens(
        messages[0].content,
        Math.max(64, budget - countTokens(system)),
      );
    }
    return { system, messages };
  }

  private record(
    task: LlmTask,
    started: number,
    usage: { promptTokens: number; completionTokens: number },
    attempts: number,
    error?: unknown,
  ): ModelCall {
    const call: ModelCall = {
      task,
      model: this.modelId,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      durationMs: Math.round(performance.now() - started),
      attempts,
      ok: error === undefined,
      error: error === undefined ? undefined : (error as Error).message,
      promptVersion: PROMPT_VERSION[task],
      usageEstimated: false,
    };
    reportCall(this.recorder, call);
    return call;
  }

  // ---- the worker ------------------------------------------------------------------------

  private enqueue(
    lane: Lane,
    body: Request['body'],
    onDelta?: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<WorkerAnswer> {
    return new Promise<WorkerAnswer>((resolve, reject) => {
      const request: Request = { id: this.nextId++, lane, body, onDelta, resolve, reject };
      if (signal?.aborted) {
        resolve({ text: '', stopReason: 'abort', promptTokens: 0, completionTokens: 0 });
        return;
      }
      signal?.addEventListener(
        'abort',
        () => {
          const queued = this.lanes[lane].indexOf(request);
          if (queued >= 0) {
            this.lanes[lane].splice(queued, 1);
            resolve({ text: '', stopReason: 'abort', promptTokens: 0, completionTokens: 0 });
          } else if (this.inFlight === request) {
            this.worker?.postMessage({ type: 'cancel', id: request.id });
          }
        },
        { once: true },
      );
      this.lanes[lane].push(request);
      this.start().then(
        () => this.dispatch(),
        (err: Error) => reject(err),
      );
    });
  }

  private dispatch(): void {
    const worker = this.worker;
    if (worker && !this.loading && !this.inFlight) {
      const next = this.lanes.reply.shift() ?? this.lanes.task.shift();
      if (next) {
        this.inFlight = next;
        this.options.onRequest?.({ lane: next.lane, body: { ...next.body } });
        worker.postMessage({ type: 'run', id: next.id, ...next.body });
      }
    }
    this.updateRef();
  }

  private start(): Promise<Worker> {
    if (this.ready) return this.ready;
    const path = fileURLToPath(this.workerUrl);
    if (!existsSync(path)) {
      return Promise.reject(
        new ModelUnavailableError(
          `The embedded model's worker script is missing at ${path}; the build must copy src/llm/*.mjs into dist/src/llm/.`,
          { task: 'reply', model: this.modelId, attempts: 1 },
          false,
        ),
      );
    }
    const worker = new Worker(this.workerUrl, {
      workerData: {
        modelPath: this.options.modelPath,
        threads: this.options.threads,
        contextSize: this.options.contextSize,
      },
    });
    this.worker = worker;
    this.loading = true;
    this.updateRef();
    this.ready = new Promise<Worker>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        switch (message.type) {
          case 'ready': {
            const { type: _type, ...info } = message;
            this.info = info;
            this.loading = false;
            this.logger.log(
              `${this.options.label} loaded in ${info.loadMs} ms: context ${info.contextSize} tokens, ` +
                `${Math.round(info.memoryBytes / 1e6)} MB, ${info.threads} thread(s)`,
            );
            resolve(worker);
            this.dispatch();
            break;
          }
          case 'fatal':
            reject(
              this.unavailable(
                `could not load ${this.options.modelPath}: ${message.message}`,
                'reply',
              ),
            );
            this.reset(this.unavailable(`could not load the model: ${message.message}`, 'reply'));
            break;
          case 'delta':
            if (this.inFlight?.id === message.id) this.inFlight.onDelta?.(message.text);
            break;
          case 'done':
            this.settle(message.id, (r) => r.resolve(message));
            break;
          case 'error':
            this.settle(message.id, (r) =>
              r.reject(
                new ModelOutputError(`${this.modelId} failed to generate: ${message.message}`, {
                  task: r.lane === 'reply' ? 'reply' : 'task',
                  model: this.modelId,
                  attempts: 1,
                }),
              ),
            );
            break;
        }
      });
      const fail = (err: ModelUnavailableError) => {
        if (this.worker !== worker) return;
        this.logger.warn(err.message);
        reject(err);
        this.reset(err);
      };
      worker.on('error', (err) => fail(this.unavailable(`worker failed: ${err.message}`, 'reply')));
      worker.on('exit', (code) =>
        fail(this.unavailable(`worker exited with code ${code}`, 'reply')),
      );
    });
    return this.ready;
  }

  private settle(id: number, action: (request: Request) => void): void {
    const request = this.inFlight;
    if (!request || request.id !== id) return;
    this.inFlight = null;
    action(request);
    this.dispatch();
  }

  /** Fails everything waiting; the next call starts a fresh worker. */
  private reset(err: Error): void {
    const pending = [this.inFlight, ...this.lanes.reply.splice(0), ...this.lanes.task.splice(0)];
    for (const request of pending) request?.reject(err);
    this.inFlight = null;
    this.worker = null;
    this.ready = null;
    this.loading = false;
  }

  /** An idle worker must not keep the process alive; a busy one must. */
  private updateRef(): void {
    if (!this.worker) return;
    const busy = this.loading || this.inFlight || this.lanes.reply.length || this.lanes.task.length;
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  private unavailable(message: string, task: string): ModelUnavailableError {
    return new ModelUnavailableError(`Embedded model: ${message}`, {
      task,
      model: this.modelId,
      attempts: 1,
    });
  }
}

/** node-llama-cpp's stop reasons in the OpenAI words the rest of Keepsake reads. */
function finishReasonOf(stopReason: string): string {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'abort') return 'cancelled';
  return 'stop';
}
