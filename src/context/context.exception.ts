import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum ContextErrorCode {
  CONVERSATION_NOT_FOUND = 'CONVERSATION_NOT_FOUND',
  INVALID_QUERY = 'INVALID_QUERY',
}

export const CONTEXT_REASONS: ReasonTable<ContextErrorCode> = {
  CONVERSATION_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The conversation does not exist or you do not take part in it (the same answer).',
  },
  INVALID_QUERY: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The message asked about is blank.',
  },
};

export class ContextException extends DomainException {
  constructor(code: ContextErrorCode, message: string, field?: string) {
    super(CONTEXT_REASONS[code].code, code, message, field);
  }

  static conversationNotFound(): ContextException {
    return new ContextException(ContextErrorCode.CONVERSATION_NOT_FOUND, 'Conversation not found.');
  }
}
