import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum JobsErrorCode {
  JOB_NOT_FOUND = 'JOB_NOT_FOUND',
  JOB_NOT_FAILED = 'JOB_NOT_FAILED',
}

const CODES: Record<JobsErrorCode, PublicErrorCode> = {
  JOB_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  JOB_NOT_FAILED: PublicErrorCode.CONFLICT,
};

export class JobsException extends DomainException {
  constructor(code: JobsErrorCode, message: string) {
    super(CODES[code], code, message);
  }
}

/** Thrown by a handler to run the job again later without counting an attempt. */
export class JobDeferred extends Error {
  constructor(
    readonly delayMs: number,
    reason = 'deferred',
  ) {
    super(reason);
  }
}
