import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum IdentityErrorCode {
  MISSING_TOKEN = 'MISSING_TOKEN',
  INVALID_TOKEN = 'INVALID_TOKEN',
  TOKEN_EXPIRED = 'TOKEN_EXPIRED',
  NOT_PLATFORM_ADMIN = 'NOT_PLATFORM_ADMIN',
  INVALID_TIMEZONE = 'INVALID_TIMEZONE',
}

const CODES: Record<IdentityErrorCode, PublicErrorCode> = {
  MISSING_TOKEN: PublicErrorCode.UNAUTHENTICATED,
  INVALID_TOKEN: PublicErrorCode.UNAUTHENTICATED,
  TOKEN_EXPIRED: PublicErrorCode.UNAUTHENTICATED,
  NOT_PLATFORM_ADMIN: PublicErrorCode.FORBIDDEN,
  INVALID_TIMEZONE: PublicErrorCode.BAD_USER_INPUT,
};

export class IdentityException extends DomainException {
  constructor(code: IdentityErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }
}
