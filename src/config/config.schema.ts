import { bool, byteSize, defineVariables, integer, oneOf, text } from './config-spec.js';
import { parseTrustProxy } from '../common/http/trust-proxy.js';

/** Server-wide variables; feature modules declare their own in `<module>.config.ts`. */
export const serverVariables = defineVariables({
  PORT: {
    description: 'HTTP port for GraphQL, WebSocket subscriptions and health checks.',
    default: '3000',
    parse: integer(0, 65535),
  },
  HOST: { description: 'Interface to listen on.', default: '0.0.0.0', parse: text },
  TRUST_PROXY: {
    description:
      "Behind a reverse proxy: whose X-Forwarded-Proto (the session cookie's Secure flag) and X-Forwarded-For (the client's address, for the anonymous rate limit) to believe, in Express's `trust proxy` terms: `loopback`, `linklocal`, `uniquelocal`, addresses or CIDR ranges separated by commas, a number of hops, or `true` (whoever connects: only where nothing but the proxy can reach the service). `false`: the headers are ignored.",
    default: 'false',
    parse: parseTrustProxy,
  },
  LOG_LEVEL: {
    description: 'Minimum log level (JSON lines on stdout): debug, info, warn, error or silent.',
    default: 'info',
    parse: oneOf('debug', 'info', 'warn', 'error', 'silent'),
  },
  SHUTDOWN_TIMEOUT_MS: {
    description: 'How long a graceful shutdown waits for in-flight requests.',
    default: '10000',
    parse: integer(0, 600000),
  },
  GRAPHQL_INTROSPECTION: {
    description:
      "Answer schema introspection (`__schema`, `__type`), for whoever may send a query. Unset: off with NODE_ENV=production, on otherwise (Apollo's own convention); off, no error names anything of the schema either.",
    parse: bool,
  },
  NODE_ENV: {
    description:
      'production (the Dockerfile sets it) turns development conveniences off unless asked for: schema introspection and the Apollo landing page.',
    parse: text,
  },
  GRAPHQL_LANDING_PAGE: {
    description:
      "Serve the Apollo landing page on GET /graphql. It runs scripts from Apollo's CDN on the console's origin. Unset: off with NODE_ENV=production, on otherwise.",
    parse: bool,
  },
  GRAPHQL_MAX_DEPTH: {
    description: 'Maximum depth of a GraphQL operation.',
    default: '10',
    parse: integer(2, 100),
  },
  GRAPHQL_MAX_COMPLEXITY: {
    description:
      'Maximum complexity of a GraphQL operation: a field costs 1, a search, reply, summary, import or save what its work costs (an embedding about 100), and a connection multiplies its children by its page size (the default page when none is given).',
    default: '5000',
    parse: integer(10, 10_000_000),
  },
  GRAPHQL_MAX_EXPENSIVE_FIELDS: {
    description:
      'Most searches, replies, summaries, imports and saves (recall, context, retrievalDebug, sendMessage, summarizeNow, importConversation, addFact, rememberThis) one operation may ask for, aliases included.',
    default: '5',
    parse: integer(1, 100),
  },
  GRAPHQL_WS_MAX_SUBSCRIPTIONS: {
    description:
      'Most operations one graphql-ws connection may hold open at once (subscriptions, and queries still running); one more is refused with TOO_MANY_SUBSCRIPTIONS until one ends. The console holds a handful.',
    default: '50',
    parse: integer(1, 10_000),
  },
  GRAPHQL_WS_MAX_CONNECTIONS_PER_USER: {
    description:
      'Most graphql-ws connections one user (a token subject) may hold open on one instance; one more is closed with 4029 and the reason "Too many connections for this user: close one first." The console holds one per open tab.',
    default: '20',
    parse: integer(1, 10_000),
  },
  BODY_LIMIT: {
    description:
      'Maximum size of an HTTP request body and of a WebSocket message, such as 500kb or 25mb.',
    default: '25mb',
    parse: byteSize,
  },
  MAX_PAGE_SIZE: {
    description: 'Largest `first`/`last` a connection accepts.',
    default: '100',
    parse: integer(1, 1000),
  },
});
