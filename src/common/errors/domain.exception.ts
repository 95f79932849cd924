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
  QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX',
  RATE_LIMITED = 'RATE_LIMITED',
}

const COMMON_CODES: Record<CommonErrorCode, PublicErrorCode> = {
  INVALID_INPUT: PublicErrorCode.BAD_USER_INPUT,
  INVALID_CURSOR: PublicErrorCode.BAD_USER_INPUT,
  PAGE_TOO_LARGE: PublicErrorCode.BAD_USER_INPUT,
  QUERY_TOO_COMPLEX: PublicErrorCode.BAD_USER_INPUT,
  RATE_LIMITED: PublicErrorCode.RATE_LIMITED,
};

/** Errors that belong to no single feature: input shape, paging, limits. */
export class CommonException extends DomainException {
  constructor(code: CommonErrorCode, message: string, field?: string, retryAfterSeconds?: number) {
    super(COMMON_CODES[code], code, message, field, retryAfterSeconds);
  }

  static invalid(field: string, message: string): CommonException {
    return new CommonException(CommonErrorCode.INVALID_INPUT, message, field);
  }
}
