import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum DatabaseErrorCode {
  /** The embedded database could not take the request in time: nothing was done. */
  DATABASE_BUSY = 'DATABASE_BUSY',
  /** The database cannot be reached (a server stopped or restarting, the embedded one reopening). */
  DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE',
  /** The disk the database writes to is (nearly) full: writes are refused, reads still work. */
  STORAGE_FULL = 'STORAGE_FULL',
}

const CODES: Record<DatabaseErrorCode, PublicErrorCode> = {
  DATABASE_BUSY: PublicErrorCode.UNAVAILABLE,
  DATABASE_UNAVAILABLE: PublicErrorCode.UNAVAILABLE,
  STORAGE_FULL: PublicErrorCode.UNAVAILABLE,
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

  static unavailable(): DatabaseException {
    return new DatabaseException(
      DatabaseErrorCode.DATABASE_UNAVAILABLE,
      'The database cannot be reached right now, so this request could not be completed. ' +
        'Try again in a few seconds (a message sent again with the same clientMessageId is stored once).',
      5,
    );
  }

  static storageFull(): DatabaseException {
    return new DatabaseException(
      DatabaseErrorCode.STORAGE_FULL,
      'Storage is full: nothing new can be saved until space is freed on the disk Keepsake ' +
        'keeps its data on. Everything already kept can still be read. Send this again once ' +
        'there is room (a message sent again with the same clientMessageId is stored once).',
      60,
    );
  }
}
