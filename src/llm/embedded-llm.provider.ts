import { Logger } from '@nestjs/common';
import {
  EmbeddedLlmWorkerClient,
  EmbeddedModelInfo,
  EmbeddedWorkerOptions,
  WorkerRequestBody,
} from './embedded-llm-worker.client.js';
import { toGrammarSchema } from './grammar-schema.js';
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
import { ModelOutputError } from './model.errors.js';
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

export interface EmbeddedModelOptions extends EmbeddedWorkerOptions {
  replyMaxTokens: number;
  /** Structured tasks' token caps, when not TASK_MAX_TOKENS's (tests, measurements). */
  taskMaxTokens?: Partial<Record<Exclude<LlmTask, 'reply'>, number>>;
}

/** Tokens kept free besides the answer: the chat template's own, and the tokenizers' gap. */
const CONTEXT_MARGIN = 96;
/** Our tokenizer (GPT's) and a small model's disagree: budgets leave a quarter spare. */
const TOKENIZER_SLACK = 1.25;

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

  private readonly logger = new Logger('EmbeddedLanguageModel');
  private readonly worker: EmbeddedLlmWorkerClient;

  constructor(
    private readonly options: EmbeddedModelOptions,
    private readonly recorder: ModelUsageRecorder,
  ) {
    this.modelId = options.modelId;
    this.worker = new EmbeddedLlmWorkerClient(options);
  }

  /** What the loaded model reports, once it is loaded. */
  get info(): EmbeddedModelInfo | null {
    return this.worker.info;
  }

  /** Loads the model now rather than on the first call. */
  async warmUp(): Promise<EmbeddedModelInfo> {
    await this.worker.start();
    return this.worker.info!;
  }

  /** Stops the model (embedded-llm-worker.client.ts: what waits fails, what runs stops). */
  close(): Promise<void> {
    return this.worker.close();
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
      const answer = await this.worker.enqueue(
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
        const answer = await this.worker.enqueue('task', {
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
  ): { system: string; messages: WorkerRequestBody['messages'] } {
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
}

/** node-llama-cpp's stop reasons in the OpenAI words the rest of Keepsake reads. */
function finishReasonOf(stopReason: string): string {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'abort') return 'cancelled';
  return 'stop';
}
