import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum JobsErrorCode {
  JOB_NOT_FOUND = 'JOB_NOT_FOUND',
  JOB_NOT_FAILED = 'JOB_NOT_FAILED',
}

export const JOBS_REASONS: ReasonTable<JobsErrorCode> = {
  JOB_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'No such job.',
  },
  JOB_NOT_FAILED: {
    code: PublicErrorCode.CONFLICT,
    means: 'Only a job that failed for good can be retried.',
  },
};

export class JobsException extends DomainException {
  constructor(code: JobsErrorCode, message: string) {
    super(JOBS_REASONS[code].code, code, message);
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
