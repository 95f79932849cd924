import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum LegacyErrorCode {
  LEGACY_NOT_FOUND = 'LEGACY_NOT_FOUND',
  MEMBER_NOT_FOUND = 'MEMBER_NOT_FOUND',
  NOT_A_MANAGER = 'NOT_A_MANAGER',
  NOT_AN_OWNER = 'NOT_AN_OWNER',
  LAST_OWNER = 'LAST_OWNER',
  ALREADY_MEMBER = 'ALREADY_MEMBER',
  INVALID_DATES = 'INVALID_DATES',
  INVITATION_NOT_FOUND = 'INVITATION_NOT_FOUND',
  MEMBER_LIMIT_REACHED = 'MEMBER_LIMIT_REACHED',
  LEGACY_LIMIT_REACHED = 'LEGACY_LIMIT_REACHED',
}

const CODES: Record<LegacyErrorCode, PublicErrorCode> = {
  LEGACY_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  MEMBER_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  NOT_A_MANAGER: PublicErrorCode.FORBIDDEN,
  NOT_AN_OWNER: PublicErrorCode.FORBIDDEN,
  LAST_OWNER: PublicErrorCode.CONFLICT,
  ALREADY_MEMBER: PublicErrorCode.CONFLICT,
  INVALID_DATES: PublicErrorCode.BAD_USER_INPUT,
  INVITATION_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  MEMBER_LIMIT_REACHED: PublicErrorCode.BAD_USER_INPUT,
  LEGACY_LIMIT_REACHED: PublicErrorCode.BAD_USER_INPUT,
};

export class LegacyException extends DomainException {
  constructor(code: LegacyErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Non-members learn nothing, not even that the legacy exists. */
  static notFound(): LegacyException {
    return new LegacyException(LegacyErrorCode.LEGACY_NOT_FOUND, 'Legacy not found.');
  }

  /** Someone else's, answered, cancelled and expired invitations all look missing. */
  static invitationNotFound(): LegacyException {
    return new LegacyException(LegacyErrorCode.INVITATION_NOT_FOUND, 'Invitation not found.');
  }
}
