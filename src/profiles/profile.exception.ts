import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum ProfileErrorCode {
  INVALID_PROFILE = 'INVALID_PROFILE',
  /** A recall id of the profile that names no entry of the caller's. */
  PROFILE_ENTRY_NOT_FOUND = 'PROFILE_ENTRY_NOT_FOUND',
}

export const PROFILE_REASONS: ReasonTable<ProfileErrorCode> = {
  INVALID_PROFILE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'A profile field is too long, not one of its allowed values, or names another member’s legacy.',
  },
  PROFILE_ENTRY_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'A `profile:<field>` recall id names no entry of yours.',
  },
};

export class ProfileException extends DomainException {
  constructor(code: ProfileErrorCode, message: string, field?: string) {
    super(PROFILE_REASONS[code].code, code, message, field);
  }

  static invalid(field: string, message: string): ProfileException {
    return new ProfileException(ProfileErrorCode.INVALID_PROFILE, message, field);
  }

  static entryNotFound(): ProfileException {
    return new ProfileException(
      ProfileErrorCode.PROFILE_ENTRY_NOT_FOUND,
      'Nothing of your profile has this id.',
    );
  }
}
