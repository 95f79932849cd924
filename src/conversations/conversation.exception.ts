import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum ConversationErrorCode {
  CONVERSATION_NOT_FOUND = 'CONVERSATION_NOT_FOUND',
  MESSAGE_NOT_FOUND = 'MESSAGE_NOT_FOUND',
  INVALID_CONTENT = 'INVALID_CONTENT',
  INVALID_METADATA = 'INVALID_METADATA',
  CLIENT_MESSAGE_ID_REUSED = 'CLIENT_MESSAGE_ID_REUSED',
  IMPORT_TOO_LARGE = 'IMPORT_TOO_LARGE',
  INVALID_TITLE = 'INVALID_TITLE',
  /** addConversationParticipant / startConversation: someone who is not a member of the legacy. */
  NOT_A_MEMBER = 'NOT_A_MEMBER',
  /** The one who started a conversation cannot leave it: they delete it instead. */
  STARTER_CANNOT_LEAVE = 'STARTER_CANNOT_LEAVE',
  /** deleteConversation by a participant who did not start it: they leave it instead. */
  NOT_STARTER = 'NOT_STARTER',
}

export const CONVERSATION_REASONS: ReasonTable<ConversationErrorCode> = {
  CONVERSATION_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The conversation does not exist or you do not take part in it (the same answer).',
  },
  MESSAGE_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The turn does not exist or is not yours to read.',
  },
  INVALID_CONTENT: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A turn, or a clientMessageId, is empty or too long.',
  },
  INVALID_METADATA: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A turn’s metadata is over METADATA_MAX_BYTES of JSON.',
  },
  CLIENT_MESSAGE_ID_REUSED: {
    code: PublicErrorCode.CONFLICT,
    means: 'The clientMessageId was already used for a different turn of this conversation.',
  },
  IMPORT_TOO_LARGE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'An imported conversation (importConversation, or one in a legacy archive) holds no turn, or more than IMPORT_MAX_MESSAGES.',
  },
  INVALID_TITLE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A title is blank or too long.',
  },
  NOT_A_MEMBER: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'Someone brought into a conversation is not a member of the legacy.',
  },
  STARTER_CANNOT_LEAVE: {
    code: PublicErrorCode.CONFLICT,
    means: 'The member who started a conversation deletes it instead of leaving it.',
  },
  NOT_STARTER: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only the member who started a conversation deletes it; the others leave it.',
  },
};

export class ConversationException extends DomainException {
  constructor(code: ConversationErrorCode, message: string, field?: string) {
    super(CONVERSATION_REASONS[code].code, code, message, field);
  }

  /** Someone else's conversation is indistinguishable from a missing one. */
  static notFound(): ConversationException {
    return new ConversationException(
      ConversationErrorCode.CONVERSATION_NOT_FOUND,
      'Conversation not found.',
    );
  }
}
