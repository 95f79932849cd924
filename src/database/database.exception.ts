import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum DatabaseErrorCode {
  /** The embedded database could not take the request in time: nothing was done. */
  DATABASE_BUSY = 'DATABASE_BUSY',
  /** The database cannot be reached (a server stopped or restarting, the embedded one reopening). */
  DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE',
  /** The disk the database writes to is (nearly) full: writes are refused, reads still work. */
  DISK_FULL = 'DISK_FULL',
}

export const DATABASE_REASONS: ReasonTable<DatabaseErrorCode> = {
  DATABASE_BUSY: {
    code: PublicErrorCode.UNAVAILABLE,
    means:
      'The database could not begin the request within DATABASE_QUEUE_TIMEOUT_MS: nothing was done; send it again after retryAfterSeconds.',
  },
  DATABASE_UNAVAILABLE: {
    code: PublicErrorCode.UNAVAILABLE,
    means:
      'The database cannot be reached (a server stopped or restarting, the embedded one being opened again): send it again after retryAfterSeconds; a message with the same clientMessageId is stored once.',
  },
  DISK_FULL: {
    code: PublicErrorCode.UNAVAILABLE,
    means:
      'The disk the data is kept on is full: writes are refused until space is freed, reads go on.',
  },
};

export class DatabaseException extends DomainException {
  constructor(code: DatabaseErrorCode, message: string, retryAfterSeconds?: number) {
    super(DATABASE_REASONS[code].code, code, message, undefined, retryAfterSeconds);
  }

  /** A request the database could not begin within DATABASE_QUEUE_TIMEOUT_MS. */
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
      DatabaseErrorCode.DISK_FULL,
      'Storage is full: nothing new can be saved until space is freed on the disk Keepsake ' +
        'keeps its data on. Everything already kept can still be read. Send this again once ' +
        'there is room (a message sent again with the same clientMessageId is stored once).',
      60,
    );
  }
}
