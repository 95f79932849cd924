import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum SignalsErrorCode {
  INVALID_PERIOD = 'INVALID_PERIOD',
}

const CODES: Record<SignalsErrorCode, PublicErrorCode> = {
  INVALID_PERIOD: PublicErrorCode.BAD_USER_INPUT,
};

export class SignalsException extends DomainException {
  constructor(code: SignalsErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }
}
