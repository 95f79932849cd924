import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum DatabaseErrorCode {
  DATABASE_BUSY = 'DATABASE_BUSY',
}

export const DATABASE_REASONS: ReasonTable<DatabaseErrorCode> = {
  DATABASE_BUSY: {
    code: PublicErrorCode.UNAVAILABLE,
    means:
      'The embedded database could not begin the request within DATABASE_QUEUE_TIMEOUT_MS: nothing was done; send it again after retryAfterSeconds.',
  },
};

export class DatabaseException extends DomainException {
  constructor(code: DatabaseErrorCode, message: string, retryAfterSeconds?: number) {
    super(DATABASE_REASONS[code].code, code, message, undefined, retryAfterSeconds);
  }

  /** A request the embedded database could not begin within DATABASE_QUEUE_TIMEOUT_MS. */
  static busy(retryAfterSeconds: number): DatabaseException {
    return new DatabaseException(
      DatabaseErrorCode.DATABASE_BUSY,
      'The service is too busy to take this request now; nothing was done. Try again shortly.',
      retryAfterSeconds,
    );
  }
}
