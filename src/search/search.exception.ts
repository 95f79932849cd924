import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum SearchErrorCode {
  RECALL_ITEM_NOT_FOUND = 'RECALL_ITEM_NOT_FOUND',
  NOT_FORGETTABLE = 'NOT_FORGETTABLE',
  NOT_FACT_AUTHOR = 'NOT_FACT_AUTHOR',
  CONVERSATION_NOT_FOUND = 'CONVERSATION_NOT_FOUND',
  INVALID_QUERY = 'INVALID_QUERY',
  INVALID_PERIOD = 'INVALID_PERIOD',
}

export const SEARCH_REASONS: ReasonTable<SearchErrorCode> = {
  RECALL_ITEM_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The recall id names nothing you may see (the same answer for anything else).',
  },
  NOT_FORGETTABLE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'Summaries and turns cannot be forgotten one by one: delete the conversation.',
  },
  NOT_FACT_AUTHOR: {
    code: PublicErrorCode.FORBIDDEN,
    means: 'Only the member who wrote a fact may forget it from recall.',
  },
  CONVERSATION_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The conversation does not exist or you do not take part in it (the same answer).',
  },
  INVALID_QUERY: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The question is blank.',
  },
  INVALID_PERIOD: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A report’s period is reversed or too long.',
  },
};

export class SearchException extends DomainException {
  constructor(code: SearchErrorCode, message: string, field?: string) {
    super(SEARCH_REASONS[code].code, code, message, field);
  }

  /** Unknown, not yours, or not visible to you: the same answer, so existence is not revealed. */
  static recallItemNotFound(): SearchException {
    return new SearchException(SearchErrorCode.RECALL_ITEM_NOT_FOUND, 'Recall item not found.');
  }
}
