import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum MemoryErrorCode {
  MEMORY_NOT_FOUND = 'MEMORY_NOT_FOUND',
  UNDO_WINDOW_PASSED = 'UNDO_WINDOW_PASSED',
  CONFIRMATION_REQUIRED = 'CONFIRMATION_REQUIRED',
  INVALID_MEMORY = 'INVALID_MEMORY',
  INVALID_FILTER = 'INVALID_FILTER',
  INVALID_IMPORT = 'INVALID_IMPORT',
  IMPORT_TOO_LARGE = 'IMPORT_TOO_LARGE',
  /** A memory a client says its model used is not the user's own active memory. */
  MEMORY_NOT_USABLE = 'MEMORY_NOT_USABLE',
}

const CODES: Record<MemoryErrorCode, PublicErrorCode> = {
  MEMORY_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  UNDO_WINDOW_PASSED: PublicErrorCode.CONFLICT,
  CONFIRMATION_REQUIRED: PublicErrorCode.BAD_USER_INPUT,
  INVALID_MEMORY: PublicErrorCode.BAD_USER_INPUT,
  INVALID_FILTER: PublicErrorCode.BAD_USER_INPUT,
  INVALID_IMPORT: PublicErrorCode.BAD_USER_INPUT,
  IMPORT_TOO_LARGE: PublicErrorCode.BAD_USER_INPUT,
  MEMORY_NOT_USABLE: PublicErrorCode.BAD_USER_INPUT,
};

export class MemoryException extends DomainException {
  constructor(code: MemoryErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Another user's memory answers exactly like one that does not exist. */
  static notFound(): MemoryException {
    return new MemoryException(MemoryErrorCode.MEMORY_NOT_FOUND, 'Memory not found.');
  }
}
