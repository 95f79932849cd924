import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloDriverConfig } from '@nestjs/apollo';
import type { GraphQLWsSubscriptionsConfig } from '@nestjs/graphql';
import { DocumentNode, parse } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { upgradeAllowed } from '../console/origins.js';
import { currentRequestId } from '../logging/request-context.storage.js';
import { formatError, publicCodeOf } from './format-error.js';
import { Loaders } from './loaders.js';
import { checkOperation, QueryLimits, queryLimitsPlugin } from './query-limits.plugin.js';
import type { RequestContext } from './request-context.js';

function bearer(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(value);
  if (match) return match[1];
  return value.trim() === '' ? null : value.trim();
}

interface WsContext {
  connectionParams?: Record<string, unknown>;
  extra?: { request?: IncomingMessage };
}

/** Builds the per-request context for HTTP and for each graphql-ws subscription alike. */
export function buildContext(arg: { req?: IncomingMessage } & WsContext): RequestContext {
  if (arg.connectionParams !== undefined || arg.extra !== undefined) {
    const params = arg.connectionParams ?? {};
    return {
      requestId: randomUUID(),
      token: bearer(params.authorization ?? params.Authorization ?? params.authToken),
      loaders: new Loaders(),
      ip: arg.extra?.request?.socket.remoteAddress,
      transport: 'ws',
    };
  }
  const req = arg.req;
  const header = req?.headers.authorization;
  return {
    requestId: currentRequestId() ?? randomUUID(),
    token: typeof header === 'string' && /^\s*Bearer\s/i.test(header) ? bearer(header) : null,
    loaders: new Loaders(),
    req,
    ip: req?.socket.remoteAddress,
    transport: 'http',
  };
}

/** One structured log line per operation: name, type, duration and error codes, never variables. */
function operationLogPlugin(): ApolloServerPlugin<RequestContext> {
  const logger = new Logger('GraphQL');
  return {
    async requestDidStart({ request }) {
      const started = performance.now();
      return {
        async willSendResponse({ contextValue, operation, errors }) {
          logger.log({
            msg: 'operation',
            operationName: request.operationName ?? operation?.name?.value ?? null,
            operation: operation?.operation ?? null,
            userId: contextValue.user?.id ?? null,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            errors: errors?.map(publicCodeOf) ?? [],
          });
        },
      };
    },
  };
}

/**
 * graphql-ws does not go through Apollo's formatError: its errors are routed through ours so a
 * refused subscription carries the same codes, and no stack, as an HTTP request. Nest passes
 * every option through to graphql-ws but types only some of them, hence the cast.
 */
function graphqlWsOptions(
  limits: QueryLimits,
  corsOrigins: readonly string[],
): GraphQLWsSubscriptionsConfig {
  const options: Pick<ServerOptions, 'onConnect' | 'onSubscribe' | 'onNext' | 'onError'> & {
    path: string;
  } = {
    path: '/graphql',
    // Browsers let any page open a WebSocket anywhere: a page from an origin CORS_ORIGINS does
    // not list is refused here (4403), as its HTTP requests are by CORS.
    onConnect: (ctx) =>
      upgradeAllowed((ctx.extra as { request?: IncomingMessage }).request, corsOrigins),
    // The same limits as over HTTP (Apollo's plugins do not run here): depth, complexity, the
    // cost of searches and replies, introspection. A document that does not parse is left to
    // graphql-ws, which reports it.
    onSubscribe: (_ctx, _id, payload) => {
      let document: DocumentNode;
      try {
        document = parse(payload.query);
      } catch {
        return undefined;
      }
      const refused = checkOperation(
        document,
        payload.operationName,
        (payload.variables ?? {}) as Record<string, unknown>,
        limits,
      );
      return refused ? [refused] : undefined;
    },
    // An error without a path is about the request itself (graphql-js's
    // variable coercion): the client's input, as Apollo reports it over HTTP.
    onNext: (_ctx, _id, _payload, _args, result) =>
      result.errors
        ? {
            ...result,
            errors: result.errors.map((e) =>
              formatError(
                !e.path && !e.extensions?.code
                  ? { ...e.toJSON(), extensions: { code: 'BAD_USER_INPUT' } }
                  : e.toJSON(),
                e,
              ),
            ),
          }
        : undefined,
    // Errors sent before execution are validation errors.
    onError: (_ctx, _id, _payload, errors) =>
      errors.map((e) =>
        formatError(
          { ...e.toJSON(), extensions: { code: 'GRAPHQL_VALIDATION_FAILED', ...e.extensions } },
          e,
        ),
      ),
  };
  return options as GraphQLWsSubscriptionsConfig;
}

export function graphqlOptions(config: AppConfig): ApolloDriverConfig {
  const env = config.env;
  const limits: QueryLimits = {
    maxDepth: env.GRAPHQL_MAX_DEPTH,
    maxComplexity: env.GRAPHQL_MAX_COMPLEXITY,
    maxExpensiveFields: env.GRAPHQL_MAX_EXPENSIVE_FIELDS,
    defaultPage: 20,
    introspection: env.GRAPHQL_INTROSPECTION,
  };
  return {
    path: '/graphql',
    autoSchemaFile: true,
    sortSchema: true,
    introspection: env.GRAPHQL_INTROSPECTION,
    graphiql: false,
    includeStacktraceInErrorResponses: false,
    subscriptions: { 'graphql-ws': graphqlWsOptions(limits, env.CORS_ORIGINS ?? []) },
    context: buildContext,
    formatError,
    plugins: [
      env.GRAPHQL_LANDING_PAGE
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true })
        : ApolloServerPluginLandingPageDisabled(),
      queryLimitsPlugin(limits),
      operationLogPlugin(),
    ],
  };
}
