/** The stable `extensions.code` values clients can rely on. */
export enum PublicErrorCode {
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  BAD_USER_INPUT = 'BAD_USER_INPUT',
  CONFLICT = 'CONFLICT',
  RATE_LIMITED = 'RATE_LIMITED',
  /** The service cannot take the request now (overloaded): retry after retryAfterSeconds. */
  UNAVAILABLE = 'UNAVAILABLE',
  INTERNAL_SERVER_ERROR = 'INTERNAL_SERVER_ERROR',
}

/** What each code means and the HTTP status it is answered with when it refuses a request. */
export const PUBLIC_CODES: Readonly<Record<PublicErrorCode, { status: number; means: string }>> = {
  UNAUTHENTICATED: {
    status: 401,
    means:
      'No valid token: over HTTP the whole request is refused with 401 before anything runs (an operation of meta fields only, such as `{ __typename }`, may be sent without one); over graphql-ws the operation gets the error.',
  },
  FORBIDDEN: { status: 403, means: 'You are signed in, but this is not yours to do.' },
  NOT_FOUND: {
    status: 404,
    means:
      'It does not exist, or you may not see it: the two are never told apart (a legacy or conversation you may not see is NOT_FOUND, never FORBIDDEN).',
  },
  BAD_USER_INPUT: {
    status: 400,
    means:
      'The request is at fault: `field` names the input (an argument or input field such as `input.content`, a variable path, or `query` for the document itself).',
  },
  CONFLICT: { status: 409, means: 'It cannot be done in the state things are in now.' },
  RATE_LIMITED: {
    status: 429,
    means: 'A limit is spent; `retryAfterSeconds` says when to try again.',
  },
  UNAVAILABLE: {
    status: 503,
    means:
      'The service could not take the request now; nothing of it was done, so it is safe to send again after `retryAfterSeconds`.',
  },
  INTERNAL_SERVER_ERROR: {
    status: 500,
    means: 'Something failed on our side; the message says nothing more and no stack is sent.',
  },
};

/**
 * What a reason is answered with and what it means. Each module declares its table beside its
 * exception; docs/errors.md is printed from these tables (npm run errors:table).
 */
export interface ReasonSpec {
  readonly code: PublicErrorCode;
  /** One sentence, for docs/errors.md. */
  readonly means: string;
}

export type ReasonTable<R extends string> = Readonly<Record<R, ReasonSpec>>;

/**
 * Base of every module's exception. Each module declares its own subclass with a code enum
 * (its `reason`) mapped to a public code; `graphql/format-error.ts` turns them into GraphQL errors.
 */
export abstract class DomainException extends Error {
  protected constructor(
    readonly publicCode: PublicErrorCode,
    readonly reason: string,
    message: string,
    /** The input field at fault, for BAD_USER_INPUT. */
    readonly field?: string,
    /** Seconds after which a RATE_LIMITED or UNAVAILABLE call may be retried. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export enum CommonErrorCode {
  INVALID_INPUT = 'INVALID_INPUT',
  INVALID_CURSOR = 'INVALID_CURSOR',
  PAGE_TOO_LARGE = 'PAGE_TOO_LARGE',
  RATE_LIMITED = 'RATE_LIMITED',
}

export const COMMON_REASONS: ReasonTable<CommonErrorCode> = {
  INVALID_INPUT: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'An argument or input field breaks its rule (a malformed id, a string too long, a number out of range); the message says which rule.',
  },
  INVALID_CURSOR: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A cursor is not one this connection gave.',
  },
  PAGE_TOO_LARGE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: '`first` or `last` is over MAX_PAGE_SIZE.',
  },
  RATE_LIMITED: {
    code: PublicErrorCode.RATE_LIMITED,
    means:
      'A rate limit or quota is spent (requests, model calls, conversations or imports per day): try again after retryAfterSeconds.',
  },
};

/** Errors that belong to no single feature: input shape, paging, limits. */
export class CommonException extends DomainException {
  constructor(code: CommonErrorCode, message: string, field?: string, retryAfterSeconds?: number) {
    super(COMMON_REASONS[code].code, code, message, field, retryAfterSeconds);
  }

  static invalid(field: string, message: string): CommonException {
    return new CommonException(CommonErrorCode.INVALID_INPUT, message, field);
  }
}
