import { cacheExchange, Client, fetchExchange, mapExchange, subscriptionExchange } from 'urql';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { resuming } from './resume';

/** True when the API refused the token: the console then goes back to the sign-in page. */
export function isUnauthenticated(error: { graphQLErrors: { extensions?: { code?: unknown } }[] }) {
  return error.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
}

/**
 * One urql client per session: queries and mutations over HTTP, subscriptions over graphql-ws,
 * both with the session's bearer token while this page holds it, otherwise with the session
 * cookie the browser sends itself (see session.ts). Everything goes through the public API at
 * /graphql.
 */
export function createApiClient(
  graphqlPath: string,
  token: string,
  onUnauthenticated: () => void,
): { client: Client; ws: WsClient } {
  const wsUrl = new URL(graphqlPath, location.href);
  wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = createWsClient({
    url: wsUrl.href,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    lazy: true,
    retryAttempts: 5,
  });
  const client = new Client({
    url: graphqlPath,
    requestPolicy: 'cache-and-network',
    // POST for queries too: Apollo refuses GETs without a CSRF header, and tokens stay out of URLs.
    preferGetMethod: false,
    fetchOptions: (): RequestInit => ({
      headers: token ? { authorization: `Bearer ${token}` } : undefined,
    }),
    exchanges: [
      mapExchange({
        onError(error) {
          if (isUnauthenticated(error)) onUnauthenticated();
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? '' };
          return {
            subscribe(sink) {
              // messageAdded picks up after the last turn it delivered when the socket reconnects.
              const unsubscribe = ws.subscribe(input, resuming(input, sink));
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { client, ws };
}
