import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

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

export const LEGACY_REASONS: ReasonTable<LegacyErrorCode> = {
  LEGACY_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The legacy does not exist or you are not a member (the same answer).',
  },
  MEMBER_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The person is not a member of the legacy.',
  },
  NOT_A_MANAGER: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only the legacy’s owners and admins may do this.',
  },
  NOT_AN_OWNER: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only the legacy’s owners may do this.',
  },
  LAST_OWNER: {
    code: PublicErrorCode.CONFLICT,
    means: 'A legacy keeps at least one owner: add another first.',
  },
  ALREADY_MEMBER: {
    code: PublicErrorCode.CONFLICT,
    means: 'The person is already a member.',
  },
  INVALID_DATES: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A date is not YYYY-MM-DD, or the death comes before the birth.',
  },
  INVITATION_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means:
      'The invitation does not exist, is not yours, or was answered, cancelled or expired (the same answer).',
  },
  MEMBER_LIMIT_REACHED: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The legacy has MAX_MEMBERS_PER_LEGACY members and pending invitations already.',
  },
  LEGACY_LIMIT_REACHED: {
    code: PublicErrorCode.CONFLICT,
    means: 'You own MAX_LEGACIES_PER_USER legacies already.',
  },
};

export class LegacyException extends DomainException {
  constructor(code: LegacyErrorCode, message: string, field?: string) {
    super(LEGACY_REASONS[code].code, code, message, field);
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
