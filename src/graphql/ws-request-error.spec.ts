import { GraphQLError, buildSchema, parse, validate } from 'graphql';
import { wsRequestError } from './graphql-options.js';

describe('wsRequestError', () => {
  it('calls an error graphql-js found in the document a validation error', () => {
    const schema = buildSchema('type Query { hello: String }');
    const [error] = validate(schema, parse('{ nope }'));
    expect(wsRequestError(error).extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('keeps the code a refusal of ours gave', () => {
    const error = new GraphQLError('Too deep', { extensions: { code: 'QUERY_TOO_COMPLEX' } });
    expect(wsRequestError(error).extensions).toEqual({ code: 'QUERY_TOO_COMPLEX' });
  });

  it('does not call an error thrown while a subscription started the client’s mistake', () => {
    const thrown = new GraphQLError('connection lost', {
      path: ['messageAdded'],
      originalError: new Error('connection lost'),
    });
    expect(wsRequestError(thrown).extensions).toBeUndefined();
    const unpathed = new GraphQLError('boom', { originalError: new Error('boom') });
    expect(wsRequestError(unpathed).extensions).toBeUndefined();
  });
});
