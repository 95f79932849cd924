import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum FactErrorCode {
  FACT_NOT_FOUND = 'FACT_NOT_FOUND',
  NOT_FACT_AUTHOR = 'NOT_FACT_AUTHOR',
  FACT_DELETED = 'FACT_DELETED',
  DUPLICATE_FACT = 'DUPLICATE_FACT',
  INVALID_FACT = 'INVALID_FACT',
}

export const FACT_REASONS: ReasonTable<FactErrorCode> = {
  FACT_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The fact does not exist or is another member’s private fact (the same answer).',
  },
  NOT_FACT_AUTHOR: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only the member who wrote a fact may do this to it.',
  },
  FACT_DELETED: {
    code: PublicErrorCode.CONFLICT,
    means: 'The fact is deleted: restore it first.',
  },
  DUPLICATE_FACT: {
    code: PublicErrorCode.CONFLICT,
    means: 'The same fact is already kept for the legacy.',
  },
  INVALID_FACT: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A fact is empty or too long.',
  },
};

export class FactException extends DomainException {
  constructor(code: FactErrorCode, message: string, field?: string) {
    super(FACT_REASONS[code].code, code, message, field);
  }

  /** Another member's private fact is indistinguishable from a missing one. */
  static notFound(): FactException {
    return new FactException(FactErrorCode.FACT_NOT_FOUND, 'Fact not found.');
  }
}
