import { Logger } from '@nestjs/common';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

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

/** What an error stands for: a resolver's or a request check's domain exception, if any. */
function originalOf(error: unknown): unknown {
  const unwrapped = unwrapResolverError(error);
  return unwrapped instanceof GraphQLError && unwrapped.originalError instanceof DomainException
    ? unwrapped.originalError
    : unwrapped;
}

/** The public code of an error, for logs written before formatting. */
export function publicCodeOf(error: unknown): string {
  const original = originalOf(error);
  if (original instanceof DomainException) return original.publicCode;
  const code = (error as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  return typeof code === 'string' ? code : PublicErrorCode.INTERNAL_SERVER_ERROR;
}

/** graphql-js's "Did you mean ...?" suggestions: names of the schema a client did not give. */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

/**
 * The one place errors become what clients see: domain exceptions keep their code, reason and
 * field; request errors keep Apollo's code; anything else is logged and reported as an
 * INTERNAL_SERVER_ERROR with no detail. Stack traces never leave the server. With
 * `hideSchemaDetails` (introspection off) request errors suggest no names: guessing near a name
 * and reading the suggestions would rebuild the schema introspection keeps to itself.
 */
export function formatError(
  formatted: GraphQLFormattedError,
  error: unknown,
  hideSchemaDetails = false,
): GraphQLFormattedError {
  const original = originalOf(error);
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
    return {
      message: hideSchemaDetails ? formatted.message.replace(SUGGESTION, '') : formatted.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: {
        code:
          code === 'GRAPHQL_VALIDATION_FAILED' || code === 'GRAPHQL_PARSE_FAILED'
            ? code
            : PublicErrorCode.BAD_USER_INPUT,
        // Set by our own request checks (query limits); never anything internal.
        ...(typeof formatted.extensions?.reason === 'string'
          ? { reason: formatted.extensions.reason }
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
