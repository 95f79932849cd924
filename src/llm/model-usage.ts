import { Logger } from '@nestjs/common';

export type LlmTask =
  'summarizeTurns' | 'extractMemories' | 'summarizePeriod' | 'rewriteQuery' | 'reply';
export type ModelTask = 'embed' | LlmTask;

/** One model call, successful or not, as recorded for cost and latency accounting. */
export interface ModelCall {
  task: ModelTask;
  /** `local:heuristic`, `local:use-lite-512`, `openai:<model>`. */
  model: string;
  promptTokens: number;
  completionTokens: number;
  durationMs: number;
  /** Requests made: 1 when the first one succeeded. */
  attempts: number;
  ok: boolean;
  /** The error class and message when `ok` is false. */
  error?: string;
  /** `PROMPT_VERSION` of the task's prompt; absent for embeddings. */
  promptVersion?: string;
  /** Token counts came from the tokenizer because the server sent no `usage`. */
  usageEstimated?: boolean;
}

/**
 * Where every model call is reported. Implementations must not throw or block: providers do not
 * await them beyond a rejected promise being logged.
 */
export interface ModelUsageRecorder {
  record(call: ModelCall): void | Promise<void>;
}

export const MODEL_USAGE_RECORDER = Symbol('MODEL_USAGE_RECORDER');

export class LoggingUsageRecorder implements ModelUsageRecorder {
  private readonly logger = new Logger('ModelUsage');

  record(call: ModelCall): void {
    const outcome = call.ok ? 'ok' : `failed (${call.error ?? 'unknown error'})`;
    this.logger.debug(
      `${call.task} ${call.model} ${outcome}: ${call.promptTokens}+${call.completionTokens} tokens, ` +
        `${call.durationMs} ms, ${call.attempts} attempt(s)`,
    );
  }
}

/** Hands a call to the recorder without letting a recorder failure reach the caller. */
export function reportCall(recorder: ModelUsageRecorder, call: ModelCall): void {
  try {
    const done = recorder.record(call);
    if (done instanceof Promise) {
      done.catch((err: unknown) =>
        new Logger('ModelUsage').warn(`usage recorder failed: ${String(err)}`),
      );
    }
  } catch (err) {
    new Logger('ModelUsage').warn(`usage recorder failed: ${String(err)}`);
  }
}
