import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

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

export const MEMORY_REASONS: ReasonTable<MemoryErrorCode> = {
  MEMORY_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The memory does not exist or is not yours (the same answer).',
  },
  UNDO_WINDOW_PASSED: {
    code: PublicErrorCode.CONFLICT,
    means: 'The memory was forgotten longer than MEMORY_UNDO_DAYS ago and cannot be restored.',
  },
  CONFIRMATION_REQUIRED: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'Clearing every memory needs the confirmation text.',
  },
  INVALID_MEMORY: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'Not something that can be kept as a memory (empty, too long, or a question).',
  },
  INVALID_FILTER: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A forget filter names nothing to forget by.',
  },
  INVALID_IMPORT: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A memory import is not a valid export; `field` names the first entry at fault.',
  },
  IMPORT_TOO_LARGE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A memory import holds more memories than an import may.',
  },
  MEMORY_NOT_USABLE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A memory a client says its model used is not one of your active memories.',
  },
};

export class MemoryException extends DomainException {
  constructor(code: MemoryErrorCode, message: string, field?: string) {
    super(MEMORY_REASONS[code].code, code, message, field);
  }

  /** Another user's memory answers exactly like one that does not exist. */
  static notFound(): MemoryException {
    return new MemoryException(MemoryErrorCode.MEMORY_NOT_FOUND, 'Memory not found.');
  }
}
