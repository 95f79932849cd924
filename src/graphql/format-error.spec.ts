import { buildSchema, GraphQLError, parse, validate } from 'graphql';
import { CommonException } from '../common/errors/domain.exception.js';
import { formatError, HIDDEN_DETAIL_MESSAGES, requestErrorMessage } from './format-error.js';
import { RequestErrorReason, requestRefusal } from './request-errors.js';

const schema = buildSchema(`
  type Query { legacy(id: ID!): Legacy! }
  type Legacy { id: ID! name: String! }
`);

/** graphql-js's validation error for a document, as Apollo hands it to formatError. */
function validationError(document: string): [GraphQLError, ReturnType<GraphQLError['toJSON']>] {
  const [error] = validate(schema, parse(document));
  return [
    error,
    { ...error.toJSON(), extensions: { code: 'GRAPHQL_VALIDATION_FAILED', stacktrace: ['at x'] } },
  ];
}

describe('requestErrorMessage', () => {
  it('replaces validation and variable messages with a fixed one when details are hidden', () => {
    expect(requestErrorMessage('GRAPHQL_VALIDATION_FAILED', 'on type "Legacy"', false, true)).toBe(
      HIDDEN_DETAIL_MESSAGES.GRAPHQL_VALIDATION_FAILED,
    );
    expect(requestErrorMessage('BAD_USER_INPUT', 'type "String!"', false, true)).toBe(
      HIDDEN_DETAIL_MESSAGES.BAD_USER_INPUT,
    );
  });

  it("keeps our own checks', parse errors' and every message when details are shown", () => {
    expect(requestErrorMessage('BAD_USER_INPUT', 'The query is 13 levels deep.', true, true)).toBe(
      'The query is 13 levels deep.',
    );
    expect(requestErrorMessage('GRAPHQL_PARSE_FAILED', 'Syntax Error: x', false, true)).toBe(
      'Syntax Error: x',
    );
    expect(
      requestErrorMessage(
        'OPERATION_RESOLUTION_FAILURE',
        'Unknown operation named "A".',
        false,
        true,
      ),
    ).toBe('Unknown operation named "A".');
    expect(requestErrorMessage('GRAPHQL_VALIDATION_FAILED', 'on type "Legacy"', false, false)).toBe(
      'on type "Legacy"',
    );
  });

  it('names nothing of any schema in the fixed messages', () => {
    for (const message of Object.values(HIDDEN_DETAIL_MESSAGES)) {
      expect(message).not.toMatch(/"|Legacy|Query|ID|String/);
    }
  });
});

describe('formatError', () => {
  it('answers a validation error with its code and locations, no detail and no stack', () => {
    const [error, formatted] = validationError('{ legacy(id: "1") { nikname } }');
    expect(formatted.message).toMatch(/on type "Legacy"/);
    expect(formatError(formatted, error, true)).toEqual({
      message: HIDDEN_DETAIL_MESSAGES.GRAPHQL_VALIDATION_FAILED,
      locations: [{ line: 1, column: 21 }],
      path: undefined,
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
  });

  it("keeps graphql-js's message with introspection on", () => {
    const [error, formatted] = validationError('{ legacy { id } }');
    expect(formatError(formatted, error, false)).toMatchObject({
      message: 'Field "legacy" argument "id" of type "ID!" is required, but it was not provided.',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
  });

  it('hides the detail of a variable error Apollo reports as BAD_USER_INPUT', () => {
    const error = new GraphQLError(
      'Variable "$i" got invalid value {}; Field "name" of required type "String!" was not provided.',
      { extensions: { code: 'BAD_USER_INPUT' } },
    );
    expect(formatError(error.toJSON(), error, true)).toMatchObject({
      message: HIDDEN_DETAIL_MESSAGES.BAD_USER_INPUT,
      extensions: { code: 'BAD_USER_INPUT', reason: 'INVALID_VARIABLE', field: 'i' },
    });
  });

  it("names the variable's path at fault, as graphql-js gives it", () => {
    const nested = new GraphQLError(
      'Variable "$input" got invalid value 5 at "input.content"; String cannot represent a non string value: 5',
      { extensions: { code: 'BAD_USER_INPUT' } },
    );
    expect(formatError(nested.toJSON(), nested, false).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      reason: 'INVALID_VARIABLE',
      field: 'input.content',
    });
    const missing = new GraphQLError('Variable "$l" of required type "ID!" was not provided.', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(formatError(missing.toJSON(), missing, true).extensions).toMatchObject({ field: 'l' });
  });

  it('names the request parameter of an HTTP request Apollo cannot run', () => {
    const unknown = new GraphQLError('Unknown operation named "A".', {
      extensions: { code: 'OPERATION_RESOLUTION_FAILURE' },
    });
    expect(formatError(unknown.toJSON(), unknown, true).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      reason: 'INVALID_REQUEST',
      field: 'operationName',
    });
  });

  it("keeps our own request check's message and reason", () => {
    const error = requestRefusal(
      RequestErrorReason.QUERY_TOO_COMPLEX,
      'The query is 13 levels deep; at most 12 are allowed.',
    );
    expect(formatError(error.toJSON(), error, true)).toEqual({
      message: 'The query is 13 levels deep; at most 12 are allowed.',
      locations: undefined,
      path: undefined,
      extensions: { code: 'BAD_USER_INPUT', reason: 'QUERY_TOO_COMPLEX', field: 'query' },
    });
  });

  it('keeps a domain exception as it is', () => {
    const error = new GraphQLError('Name is too long.', {
      path: ['createLegacy'],
      originalError: CommonException.invalid('name', 'Name is too long.'),
    });
    expect(formatError(error.toJSON(), error, true)).toEqual({
      message: 'Name is too long.',
      path: ['createLegacy'],
      locations: undefined,
      extensions: { code: 'BAD_USER_INPUT', reason: 'INVALID_INPUT', field: 'name' },
    });
  });
});
