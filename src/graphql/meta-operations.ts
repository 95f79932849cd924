import { ApolloServerPlugin } from '@apollo/server';
import {
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLError,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { DomainException, PUBLIC_CODES } from '../common/errors/domain.exception.js';
import type { RequestAuthenticator } from '../identity/request-authenticator.js';
import type { RequestContext } from './request-context.js';

/** Whether every root field (fragments included) is a meta field: `__typename`, `__schema`. */
function onlyMetaFields(
  set: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): boolean {
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (!sel.name.value.startsWith('__')) return false;
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      if (!onlyMetaFields(sel.selectionSet, fragments, seen)) return false;
    } else if (!seen.has(sel.name.value) && fragments[sel.name.value]) {
      seen.add(sel.name.value);
      if (!onlyMetaFields(fragments[sel.name.value].selectionSet, fragments, seen)) return false;
    }
  }
  return true;
}

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  return Object.fromEntries(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
}

/** The operation a request runs, when the document names one unambiguously. */
function operationOf(
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  return operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
}

/** A domain refusal of the whole request, with its code's HTTP status. */
function refusedWith(err: unknown): GraphQLError {
  if (!(err instanceof DomainException)) throw err;
  // formatError reads the code, reason and retry from the domain exception it wraps.
  return new GraphQLError(err.message, {
    originalError: err,
    extensions: { http: { status: PUBLIC_CODES[err.publicCode].status } },
  });
}

/**
 * An operation of meta fields only (`{ __typename }`, introspection) runs no resolver, so no
 * guard counts it: it is counted here, against the caller's budget like any root field, the
 * anonymous one by address without a token. Null when it may run; otherwise the refusal.
 */
export async function countMetaOperation(
  authenticator: RequestAuthenticator,
  document: DocumentNode,
  operationName: string | null | undefined,
  context: Pick<RequestContext, 'token' | 'ip'>,
): Promise<GraphQLError | null> {
  const operation = operationOf(document, operationName);
  if (!operation) return null;
  if (!onlyMetaFields(operation.selectionSet, fragmentsOf(document))) return null;
  try {
    await authenticator.count(context.token, context.ip);
    return null;
  } catch (err) {
    return refusedWith(err);
  }
}

/**
 * Who is asking, over HTTP, settled once before anything runs: an operation of meta fields only
 * is counted (countMetaOperation); any other needs a valid token, and is refused as a whole
 * without one, missing or refused alike (401, UNAUTHENTICATED with its reason), rather than
 * answered 200 with an error per field. The resolvers' guard then finds the user in the context
 * and counts each root field. graphql-ws calls countMetaOperation from onSubscribe, and its
 * operations are refused one by one by the guard (a socket has no status to answer with).
 */
export function requestAuthenticationPlugin(
  authenticator: RequestAuthenticator,
): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request, contextValue }) {
          const operation = operationOf(document, request.operationName);
          if (!operation) return;
          if (onlyMetaFields(operation.selectionSet, fragmentsOf(document))) {
            const refused = await countMetaOperation(
              authenticator,
              document,
              request.operationName,
              contextValue,
            );
            if (refused) throw refused;
            return;
          }
          if (contextValue.user) return;
          try {
            const { user, expiresAt } = await authenticator.authenticate(
              contextValue.token,
              contextValue.ip,
            );
            contextValue.user = user;
            contextValue.tokenExpiresAt = expiresAt;
          } catch (err) {
            throw refusedWith(err);
          }
        },
      };
    },
  };
}
