import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum SignalsErrorCode {
  INVALID_PERIOD = 'INVALID_PERIOD',
}

export const SIGNALS_REASONS: ReasonTable<SignalsErrorCode> = {
  INVALID_PERIOD: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A report’s period is reversed or too long.',
  },
};

export class SignalsException extends DomainException {
  constructor(code: SignalsErrorCode, message: string, field?: string) {
    super(SIGNALS_REASONS[code].code, code, message, field);
  }
}
