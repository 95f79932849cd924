import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum IdentityErrorCode {
  MISSING_TOKEN = 'MISSING_TOKEN',
  INVALID_TOKEN = 'INVALID_TOKEN',
  TOKEN_EXPIRED = 'TOKEN_EXPIRED',
  TOKEN_REVOKED = 'TOKEN_REVOKED',
  NOT_PLATFORM_ADMIN = 'NOT_PLATFORM_ADMIN',
  INVALID_TIMEZONE = 'INVALID_TIMEZONE',
}

export const IDENTITY_REASONS: ReasonTable<IdentityErrorCode> = {
  MISSING_TOKEN: {
    code: PublicErrorCode.UNAUTHENTICATED,
    means: 'No token was sent (HTTP status 401).',
  },
  INVALID_TOKEN: {
    code: PublicErrorCode.UNAUTHENTICATED,
    means:
      'The token is not one this service accepts: signature, issuer, audience, lifetime or subject (HTTP status 401).',
  },
  TOKEN_EXPIRED: {
    code: PublicErrorCode.UNAUTHENTICATED,
    means:
      'The token has expired; a subscription opened with it ends with this reason (HTTP status 401).',
  },
  TOKEN_REVOKED: {
    code: PublicErrorCode.UNAUTHENTICATED,
    means:
      'The token belongs to a session that was signed out (DELETE /app/session), on any instance; its open WebSockets were closed with 4401 (HTTP status 401).',
  },
  NOT_PLATFORM_ADMIN: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only platform administrators (JWT_ADMIN_CLAIM) may do this.',
  },
  INVALID_TIMEZONE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The time zone is not an IANA name such as Europe/Paris.',
  },
};

export class IdentityException extends DomainException {
  constructor(code: IdentityErrorCode, message: string, field?: string) {
    super(IDENTITY_REASONS[code].code, code, message, field);
  }
}
