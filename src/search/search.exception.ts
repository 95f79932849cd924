import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum SearchErrorCode {
  RECALL_ITEM_NOT_FOUND = 'RECALL_ITEM_NOT_FOUND',
  NOT_FORGETTABLE = 'NOT_FORGETTABLE',
  NOT_FACT_AUTHOR = 'NOT_FACT_AUTHOR',
  CONVERSATION_NOT_FOUND = 'CONVERSATION_NOT_FOUND',
  INVALID_QUERY = 'INVALID_QUERY',
  INVALID_PERIOD = 'INVALID_PERIOD',
}

const CODES: Record<SearchErrorCode, PublicErrorCode> = {
  RECALL_ITEM_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  NOT_FORGETTABLE: PublicErrorCode.BAD_USER_INPUT,
  NOT_FACT_AUTHOR: PublicErrorCode.FORBIDDEN,
  CONVERSATION_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  INVALID_QUERY: PublicErrorCode.BAD_USER_INPUT,
  INVALID_PERIOD: PublicErrorCode.BAD_USER_INPUT,
};

export class SearchException extends DomainException {
  constructor(code: SearchErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Unknown, not yours, or not visible to you: the same answer, so existence is not revealed. */
  static recallItemNotFound(): SearchException {
    return new SearchException(SearchErrorCode.RECALL_ITEM_NOT_FOUND, 'Recall item not found.');
  }
}
