import { Logger } from '@nestjs/common';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';
import { RequestErrorReason, variableField } from './request-errors.js';

const logger = new Logger('GraphQL');

/** Codes Apollo itself assigns to request errors (parse, validation, bad variables). */
const APOLLO_REQUEST_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
]);

/**
 * The reason and field of a request error Apollo or graphql-js raised: a variable's value
 * (graphql-js names its path), or the HTTP request itself.
 */
function requestInputOf(code: string, message: string): { reason: string; field: string } {
  if (code === 'BAD_USER_INPUT') {
    return { reason: RequestErrorReason.INVALID_VARIABLE, field: variableField(message) };
  }
  const field =
    code === 'OPERATION_RESOLUTION_FAILURE' || /operationName/.test(message)
      ? 'operationName'
      : code.startsWith('PERSISTED_QUERY') || /`extensions`/.test(message)
        ? 'extensions'
        : /`variables`/.test(message)
          ? 'variables'
          : 'query';
  return { reason: RequestErrorReason.INVALID_REQUEST, field };
}

/** Turns a failure of the database itself (gone, full) into the domain exception it stands for. */
export type DatabaseFailureMapper = (err: unknown) => DomainException | null;

/**
 * What an error stands for: a resolver's or a request check's domain exception, or the one a
 * database failure stands for (`databaseFailure`: a server gone, a full disk), if any.
 */
function originalOf(error: unknown, databaseFailure?: DatabaseFailureMapper): unknown {
  const unwrapped = unwrapResolverError(error);
  const original =
    unwrapped instanceof GraphQLError && unwrapped.originalError
      ? unwrapped.originalError
      : unwrapped;
  if (original instanceof DomainException) return original;
  return databaseFailure?.(original) ?? unwrapped;
}

/** The public code of an error, for logs written before formatting. */
export function publicCodeOf(error: unknown, databaseFailure?: DatabaseFailureMapper): string {
  const original = originalOf(error, databaseFailure);
  if (original instanceof DomainException) return original.publicCode;
  const code = (error as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  return typeof code === 'string' ? code : PublicErrorCode.INTERNAL_SERVER_ERROR;
}

/**
 * What a client reads, with introspection off, instead of graphql-js's message for a request it
 * got wrong: those name types, fields, arguments and enum values the client never wrote (and
 * suggest near names), enough to rebuild the schema introspection keeps to itself.
 */
export const HIDDEN_DETAIL_MESSAGES: Readonly<Record<string, string>> = {
  GRAPHQL_VALIDATION_FAILED:
    'The operation is not valid for this API (details are hidden while introspection is off).',
  BAD_USER_INPUT:
    "A variable's value is not valid for this API (details are hidden while introspection is off).",
};

/**
 * The message a request error reaches the client with. Our own request checks (query limits,
 * each with a `reason`) name nothing of the schema and keep theirs; so do parse errors, which
 * quote only the client's document.
 */
export function requestErrorMessage(
  code: string,
  message: string,
  ownCheck: boolean,
  hideSchemaDetails: boolean,
): string {
  if (!hideSchemaDetails || ownCheck) return message;
  return HIDDEN_DETAIL_MESSAGES[code] ?? message;
}

/**
 * The one place errors become what clients see: domain exceptions keep their code, reason and
 * field; request errors keep Apollo's code; anything else is logged and reported as an
 * INTERNAL_SERVER_ERROR with no detail. Stack traces never leave the server. With
 * `hideSchemaDetails` (introspection off) validation and variable errors name nothing of the
 * schema (requestErrorMessage).
 */
export function formatError(
  formatted: GraphQLFormattedError,
  error: unknown,
  hideSchemaDetails = false,
  databaseFailure?: DatabaseFailureMapper,
): GraphQLFormattedError {
  const original = originalOf(error, databaseFailure);
  if (original instanceof DomainException) {
    return {
      message: original.message,
      path: formatted.path,
      locations: formatted.locations,
      extensions: {
        code: original.publicCode,
        reason: original.reason,
        ...(original.field ? { field: original.field } : {}),
        ...(original.retryAfterSeconds ? { retryAfterSeconds: original.retryAfterSeconds } : {}),
      },
    };
  }
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && APOLLO_REQUEST_CODES.has(code)) {
    const publicCode =
      code === 'GRAPHQL_VALIDATION_FAILED' || code === 'GRAPHQL_PARSE_FAILED'
        ? code
        : PublicErrorCode.BAD_USER_INPUT;
    // Set by our own request checks (query limits), with the parameter at fault.
    const reason = formatted.extensions?.reason;
    const ownCheck = typeof reason === 'string';
    return {
      message: requestErrorMessage(code, formatted.message, ownCheck, hideSchemaDetails),
      locations: formatted.locations,
      path: formatted.path,
      extensions: {
        code: publicCode,
        ...(ownCheck
          ? { reason, field: formatted.extensions?.field ?? 'query' }
          : publicCode === PublicErrorCode.BAD_USER_INPUT
            ? requestInputOf(code, formatted.message)
            : {}),
      },
    };
  }
  logger.error({
    msg: 'unexpected error',
    error: original instanceof Error ? original.message : String(original),
    stack: original instanceof Error ? original.stack : undefined,
    path: formatted.path,
  });
  return {
    message: 'Internal server error.',
    path: formatted.path,
    locations: formatted.locations,
    extensions: { code: PublicErrorCode.INTERNAL_SERVER_ERROR },
  };
}
