import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

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

export const STORY_REASONS: ReasonTable<StoryErrorCode> = {
  STORY_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The story does not exist or is another member’s private story (the same answer).',
  },
  NOT_STORY_AUTHOR: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only the member who added a story may do this to it.',
  },
  INVALID_STORY: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A title or text is blank or too long.',
  },
  UNREADABLE_DOCUMENT: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'The uploaded file cannot be read (the message says why: a password, no text, not the type it claims).',
  },
  NOT_EDITABLE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'An uploaded document’s text cannot be edited, only its title and sharing.',
  },
  NOT_READY: {
    code: PublicErrorCode.CONFLICT,
    means: 'The story is still being indexed.',
  },
  STORAGE_FULL: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'You keep MEMBER_STORAGE_MAX_BYTES of stories and documents in the legacy already.',
  },
};

export class StoryException extends DomainException {
  constructor(code: StoryErrorCode, message: string, field?: string) {
    super(STORY_REASONS[code].code, code, message, field);
  }

  /** Another member's private story is indistinguishable from a missing one. */
  static notFound(): StoryException {
    return new StoryException(StoryErrorCode.STORY_NOT_FOUND, 'Story not found.');
  }
}
