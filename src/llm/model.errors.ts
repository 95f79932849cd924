import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum ModelErrorCode {
  MODEL_UNAVAILABLE = 'MODEL_UNAVAILABLE',
  MODEL_OUTPUT_INVALID = 'MODEL_OUTPUT_INVALID',
}

export interface ModelErrorDetails {
  /** The task that failed, such as `embed` or `summarizeTurns`. */
  task: string;
  model: string;
  /** Requests made, including the failed ones. */
  attempts: number;
  cause?: unknown;
}

/**
 * The model could not be reached or refused the request (network, timeout, 429, 5xx after the
 * retries, bad credentials, a crashed worker). Callers keep the text and try again later:
 * `retryable` is false only when trying again cannot help without a configuration change.
 */
export class ModelUnavailableError extends DomainException {
  readonly task: string;
  readonly model: string;
  readonly attempts: number;

  constructor(
    message: string,
    details: ModelErrorDetails,
    readonly retryable = true,
    retryAfterSeconds?: number,
  ) {
    super(
      PublicErrorCode.INTERNAL_SERVER_ERROR,
      ModelErrorCode.MODEL_UNAVAILABLE,
      message,
      undefined,
      retryAfterSeconds,
    );
    this.task = details.task;
    this.model = details.model;
    this.attempts = details.attempts;
    if (details.cause !== undefined) this.cause = details.cause;
  }
}

/**
 * The model answered, but not with what was asked for (unparseable JSON, a schema violation,
 * a wrong vector size, a refusal, a cut-off stream). The output is never used in part.
 */
export class ModelOutputError extends DomainException {
  readonly task: string;
  readonly model: string;
  readonly attempts: number;

  constructor(
    message: string,
    details: ModelErrorDetails,
    /** What failed validation, as `path: problem` lines. */
    readonly problems: string[] = [],
    /** The start of the raw output, for the logs. */
    readonly excerpt?: string,
  ) {
    super(PublicErrorCode.INTERNAL_SERVER_ERROR, ModelErrorCode.MODEL_OUTPUT_INVALID, message);
    this.task = details.task;
    this.model = details.model;
    this.attempts = details.attempts;
    if (details.cause !== undefined) this.cause = details.cause;
  }
}

export type ModelError = ModelUnavailableError | ModelOutputError;

export function isModelError(err: unknown): err is ModelError {
  return err instanceof ModelUnavailableError || err instanceof ModelOutputError;
}
