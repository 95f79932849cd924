import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

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

const CODES: Record<ConversationErrorCode, PublicErrorCode> = {
  CONVERSATION_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  MESSAGE_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  INVALID_CONTENT: PublicErrorCode.BAD_USER_INPUT,
  INVALID_METADATA: PublicErrorCode.BAD_USER_INPUT,
  CLIENT_MESSAGE_ID_REUSED: PublicErrorCode.CONFLICT,
  IMPORT_TOO_LARGE: PublicErrorCode.BAD_USER_INPUT,
  INVALID_TITLE: PublicErrorCode.BAD_USER_INPUT,
  NOT_A_MEMBER: PublicErrorCode.BAD_USER_INPUT,
  STARTER_CANNOT_LEAVE: PublicErrorCode.CONFLICT,
  NOT_STARTER: PublicErrorCode.FORBIDDEN,
};

export class ConversationException extends DomainException {
  constructor(code: ConversationErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Someone else's conversation is indistinguishable from a missing one. */
  static notFound(): ConversationException {
    return new ConversationException(
      ConversationErrorCode.CONVERSATION_NOT_FOUND,
      'Conversation not found.',
    );
  }
}
