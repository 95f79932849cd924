import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum FactErrorCode {
  FACT_NOT_FOUND = 'FACT_NOT_FOUND',
  NOT_FACT_AUTHOR = 'NOT_FACT_AUTHOR',
  FACT_DELETED = 'FACT_DELETED',
  DUPLICATE_FACT = 'DUPLICATE_FACT',
  INVALID_FACT = 'INVALID_FACT',
}

const CODES: Record<FactErrorCode, PublicErrorCode> = {
  FACT_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  NOT_FACT_AUTHOR: PublicErrorCode.FORBIDDEN,
  FACT_DELETED: PublicErrorCode.CONFLICT,
  DUPLICATE_FACT: PublicErrorCode.CONFLICT,
  INVALID_FACT: PublicErrorCode.BAD_USER_INPUT,
};

export class FactException extends DomainException {
  constructor(code: FactErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Another member's private fact is indistinguishable from a missing one. */
  static notFound(): FactException {
    return new FactException(FactErrorCode.FACT_NOT_FOUND, 'Fact not found.');
  }
}
