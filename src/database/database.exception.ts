import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum DatabaseErrorCode {
  DATABASE_BUSY = 'DATABASE_BUSY',
}

const CODES: Record<DatabaseErrorCode, PublicErrorCode> = {
  DATABASE_BUSY: PublicErrorCode.UNAVAILABLE,
};

export class DatabaseException extends DomainException {
  constructor(code: DatabaseErrorCode, message: string, retryAfterSeconds?: number) {
    super(CODES[code], code, message, undefined, retryAfterSeconds);
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
