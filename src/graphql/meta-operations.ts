import { ApolloServerPlugin } from '@apollo/server';
import {
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLError,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';
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

const STATUS: Partial<Record<PublicErrorCode, number>> = {
  [PublicErrorCode.UNAUTHENTICATED]: 401,
  [PublicErrorCode.RATE_LIMITED]: 429,
};

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
  const fragments = Object.fromEntries(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  if (!onlyMetaFields(operation.selectionSet, fragments)) return null;
  try {
    await authenticator.count(context.token, context.ip);
    return null;
  } catch (err) {
    if (!(err instanceof DomainException)) throw err;
    // formatError reads the code, reason and retry from the domain exception it wraps.
    return new GraphQLError(err.message, {
      originalError: err,
      extensions: { http: { status: STATUS[err.publicCode] ?? 400 } },
    });
  }
}

/** countMetaOperation for GraphQL over HTTP; graphql-ws calls it from onSubscribe. */
export function metaOperationsPlugin(
  authenticator: RequestAuthenticator,
): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request, contextValue }) {
          const refused = await countMetaOperation(
            authenticator,
            document,
            request.operationName,
            contextValue,
          );
          if (refused) throw refused;
        },
      };
    },
  };
}
