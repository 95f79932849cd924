import { GraphQLError } from 'graphql';
import { PublicErrorCode, type ReasonTable } from '../common/errors/domain.exception.js';

/**
 * Reasons of the refusals made of a request as a whole, before any resolver runs: the
 * document's limits, the transport, a variable's value. Each names the request parameter at
 * fault in `field` (`query`, `variables` or a variable's path such as `input.content`).
 */
export enum RequestErrorReason {
  QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX',
  TOO_MANY_EXPENSIVE_FIELDS = 'TOO_MANY_EXPENSIVE_FIELDS',
  INTROSPECTION_DISABLED = 'INTROSPECTION_DISABLED',
  SUBSCRIPTION_OVER_HTTP = 'SUBSCRIPTION_OVER_HTTP',
  INVALID_VARIABLE = 'INVALID_VARIABLE',
  VARIABLES_TOO_DEEP = 'VARIABLES_TOO_DEEP',
  INVALID_REQUEST = 'INVALID_REQUEST',
  TOO_LARGE = 'TOO_LARGE',
  TOO_MANY_SUBSCRIPTIONS = 'TOO_MANY_SUBSCRIPTIONS',
  ONE_MUTATION_PER_REQUEST = 'ONE_MUTATION_PER_REQUEST',
}

export const REQUEST_REASONS: ReasonTable<RequestErrorReason> = {
  QUERY_TOO_COMPLEX: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'The document is deeper than GRAPHQL_MAX_DEPTH, costs more than GRAPHQL_MAX_COMPLEXITY, or nests over 256 brackets or 256 fragments; nothing ran.',
  },
  TOO_MANY_EXPENSIVE_FIELDS: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'The operation asks for more than GRAPHQL_MAX_EXPENSIVE_FIELDS searches, replies, imports or saves, aliases included; nothing ran.',
  },
  INTROSPECTION_DISABLED: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'Introspection is off on this server (by default with NODE_ENV=production; GRAPHQL_INTROSPECTION turns it on or off).',
  },
  SUBSCRIPTION_OVER_HTTP: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'Subscriptions are served over graphql-ws on /graphql, not over HTTP.',
  },
  INVALID_VARIABLE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      "A variable's value does not fit its type (missing, null where it may not be, the wrong type); `field` is its path, such as `input.content`.",
  },
  VARIABLES_TOO_DEEP: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'A variable nests more than 32 levels of objects and lists (message metadata included); `field` names it; nothing ran.',
  },
  INVALID_REQUEST: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'The HTTP request is not a GraphQL request this server takes (no query, an operation name the document lacks, a malformed body).',
  },
  TOO_LARGE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The body is over BODY_LIMIT, or an uploaded file over DOCUMENT_MAX_BYTES (HTTP 413).',
  },
  TOO_MANY_SUBSCRIPTIONS: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'The graphql-ws connection holds GRAPHQL_WS_MAX_SUBSCRIPTIONS operations open already: complete one first, or open another connection.',
  },
  ONE_MUTATION_PER_REQUEST: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means:
      'A mutation operation asks for more than one root field (aliases included): send each on its own, so that each is done, or not, and answered; nothing ran.',
  },
};

/**
 * A refusal of the whole request: 400 (not the 500 Apollo gives an error thrown from a plugin),
 * with its reason and the request parameter at fault.
 */
export function requestRefusal(
  reason: RequestErrorReason,
  message: string,
  field = 'query',
): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code: REQUEST_REASONS[reason].code,
      reason,
      field,
      http: { status: 400 },
    },
  });
}

/**
 * The input a variable error is about, from graphql-js's message (`Variable "$input" got invalid
 * value … at "input.content"; …`, `Variable "$l" of required type "ID!" was not provided.`): the
 * path it names, else the variable. Only names the client wrote: the variable, and the fields of
 * its value down to the one at fault.
 */
export function variableField(message: string): string {
  const at = /^Variable "\$[^"]+" got invalid value .*? at "([^"]+)"/s.exec(message);
  if (at) return at[1];
  const variable = /^Variable "\$([^"]+)"/.exec(message);
  return variable ? variable[1] : 'variables';
}
