import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum StoryErrorCode {
  STORY_NOT_FOUND = 'STORY_NOT_FOUND',
  NOT_STORY_AUTHOR = 'NOT_STORY_AUTHOR',
  INVALID_STORY = 'INVALID_STORY',
  /** The uploaded file cannot be read: the message says why. */
  UNREADABLE_DOCUMENT = 'UNREADABLE_DOCUMENT',
  NOT_EDITABLE = 'NOT_EDITABLE',
  NOT_READY = 'NOT_READY',
  /** The member keeps MEMBER_STORAGE_MAX_BYTES of stories and documents in the legacy already. */
  STORAGE_FULL = 'STORAGE_FULL',
}

const CODES: Record<StoryErrorCode, PublicErrorCode> = {
  STORY_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  NOT_STORY_AUTHOR: PublicErrorCode.FORBIDDEN,
  INVALID_STORY: PublicErrorCode.BAD_USER_INPUT,
  UNREADABLE_DOCUMENT: PublicErrorCode.BAD_USER_INPUT,
  NOT_EDITABLE: PublicErrorCode.BAD_USER_INPUT,
  NOT_READY: PublicErrorCode.CONFLICT,
  STORAGE_FULL: PublicErrorCode.BAD_USER_INPUT,
};

export class StoryException extends DomainException {
  constructor(code: StoryErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Another member's private story is indistinguishable from a missing one. */
  static notFound(): StoryException {
    return new StoryException(StoryErrorCode.STORY_NOT_FOUND, 'Story not found.');
  }
}
