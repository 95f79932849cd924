import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum ProfileErrorCode {
  INVALID_PROFILE = 'INVALID_PROFILE',
  /** A recall id of the profile that names no entry of the caller's. */
  PROFILE_ENTRY_NOT_FOUND = 'PROFILE_ENTRY_NOT_FOUND',
}

const CODES: Record<ProfileErrorCode, PublicErrorCode> = {
  INVALID_PROFILE: PublicErrorCode.BAD_USER_INPUT,
  PROFILE_ENTRY_NOT_FOUND: PublicErrorCode.NOT_FOUND,
};

export class ProfileException extends DomainException {
  constructor(code: ProfileErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
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
