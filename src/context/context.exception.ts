import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum ContextErrorCode {
  CONVERSATION_NOT_FOUND = 'CONVERSATION_NOT_FOUND',
  INVALID_QUERY = 'INVALID_QUERY',
}

const CODES: Record<ContextErrorCode, PublicErrorCode> = {
  CONVERSATION_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  INVALID_QUERY: PublicErrorCode.BAD_USER_INPUT,
};

export class ContextException extends DomainException {
  constructor(code: ContextErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  static conversationNotFound(): ContextException {
    return new ContextException(ContextErrorCode.CONVERSATION_NOT_FOUND, 'Conversation not found.');
  }
}
