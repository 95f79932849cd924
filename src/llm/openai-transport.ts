import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { ModelOutputError, ModelUnavailableError } from './model.errors.js';
import { FailureVerdict, RetriesExhausted, RetryPolicy, parseRetryAfter } from './retry.js';

export interface OpenAiEndpointOptions {
  baseURL?: string;
  apiKey?: string;
  timeoutMs: number;
  retry: RetryPolicy;
}

/** The longest Retry-After waited for inside a call; beyond it the caller retries later. */
export const MAX_RETRY_AFTER_MS = 30_000;
/** Ceiling of the exponential backoff between attempts. */
export const MAX_BACKOFF_MS = 20_000;

/**
 * An OpenAI SDK client whose own retries are off (ours are the only ones, and testable) and
 * which reads nothing from OPENAI_* environment variables: only Keepsake's settings apply.
 */
export function createOpenAiClient(options: OpenAiEndpointOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseURL ?? 'https://api.openai.com/v1',
    // Local servers (Ollama, llama.cpp) accept any key, but the SDK insists on one.
    apiKey: options.apiKey ?? 'not-needed',
    organization: null,
    project: null,
    maxRetries: 0,
    // Our per-attempt deadline fires first; this is a backstop.
    timeout: options.timeoutMs + 1000,
  });
}

export class AttemptTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/** The server answered 2xx with something that is not an OpenAI response. */
export class MalformedResponseError extends Error {}

/**
 * A per-attempt deadline. The SDK's timeout stops at the response headers, so a server that
 * stalls while sending the body (or a stream) would otherwise hang the call. `touch()` pushes
 * the deadline back, which makes it an idle timeout for streams.
 */
export class AttemptDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;
  timedOut = false;

  constructor(private readonly timeoutMs: number) {
    this.timer = this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  /** The error to surface: a timeout if the deadline caused it, the original otherwise. */
  translate(err: unknown): unknown {
    return this.timedOut ? new AttemptTimeoutError(this.timeoutMs) : err;
  }

  private arm(): NodeJS.Timeout {
    return setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
  }
}

export async function withDeadline<T>(
  timeoutMs: number,
  run: (deadline: AttemptDeadline) => Promise<T>,
): Promise<T> {
  const deadline = new AttemptDeadline(timeoutMs);
  try {
    const value = await run(deadline);
    if (deadline.timedOut) throw new AttemptTimeoutError(timeoutMs);
    return value;
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Errors from Node internals (undici) can come from another realm under Jest's VM modules, where
 * `instanceof Error` is false, so these helpers look at the shape instead.
 */
function errorFields(
  err: unknown,
): { name: string; message: string; code?: string; cause?: unknown } | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
  if (typeof e.message !== 'string') return null;
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: e.message,
    code: typeof e.code === 'string' ? e.code : undefined,
    cause: e.cause,
  };
}

function isNetworkError(err: unknown, depth = 0): boolean {
  const e = errorFields(err);
  if (!e || depth > 3) return false;
  if (e.code && NETWORK_CODES.has(e.code)) return true;
  // undici reports a connection dropped mid-body as `TypeError: terminated`.
  if (e.name === 'TypeError' && /terminated|fetch failed|other side closed/i.test(e.message)) {
    return true;
  }
  return e.cause !== undefined && isNetworkError(e.cause, depth + 1);
}

/** Retry on 408, 409, 429, 5xx, timeouts, dropped connections and garbled 2xx bodies. */
export function classifyOpenAiError(err: unknown): FailureVerdict {
  if (err instanceof ModelOutputError || err instanceof ModelUnavailableError) {
    return { retryable: false };
  }
  if (err instanceof AttemptTimeoutError || err instanceof MalformedResponseError) {
    return { retryable: true };
  }
  if (err instanceof APIUserAbortError) return { retryable: false };
  if (err instanceof APIConnectionError) return { retryable: true };
  if (err instanceof APIError) {
    const status = err.status;
    // A stream that carried an `error` event has no status: a server-side failure.
    if (status === undefined) return { retryable: true };
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const headers = err.headers;
    const retryAfterMs = headers
      ? parseRetryAfter(headers.get('retry-after'), headers.get('retry-after-ms'))
      : undefined;
    return { retryable, retryAfterMs };
  }
  // A 2xx body that is not JSON surfaces as a SyntaxError from the SDK's parser.
  if (errorFields(err)?.name === 'SyntaxError') return { retryable: true };
  return { retryable: isNetworkError(err) };
}

export function describeError(err: unknown): string {
  const e = errorFields(err);
  if (!e) return String(err);
  return e.name === 'Error' || err instanceof APIError ? e.message : `${e.name}: ${e.message}`;
}

/** The error a provider throws once `withRetries` gives up. */
export function toModelError(
  exhausted: RetriesExhausted,
  task: string,
  model: string,
  attempts: number,
): ModelOutputError | ModelUnavailableError {
  const last = exhausted.lastError;
  const details = { task, model, attempts, cause: last };
  if (last instanceof ModelOutputError) {
    return new ModelOutputError(last.message, details, last.problems, last.excerpt);
  }
  if (last instanceof ModelUnavailableError) {
    return new ModelUnavailableError(
      last.message,
      { ...details, cause: last.cause },
      last.retryable,
    );
  }
  const retryAfterSeconds =
    exhausted.retryAfterMs !== undefined ? Math.ceil(exhausted.retryAfterMs / 1000) : undefined;
  const why = describeError(last);
  const message =
    exhausted.retryAfterMs !== undefined
      ? `${model} ${task}: the server asked to wait ${retryAfterSeconds} s (${why})`
      : exhausted.verdict.retryable
        ? `${model} ${task} failed after ${attempts} attempt(s): ${why}`
        : `${model} ${task} was refused: ${why}`;
  return new ModelUnavailableError(
    message,
    details,
    exhausted.verdict.retryable,
    retryAfterSeconds,
  );
}
