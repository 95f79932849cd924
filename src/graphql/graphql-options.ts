import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloDriverConfig } from '@nestjs/apollo';
import type { GraphQLWsSubscriptionsConfig } from '@nestjs/graphql';
import {
  DocumentNode,
  execute,
  ExecutionResult,
  GraphQLError,
  GraphQLFormattedError,
  getOperationAST,
  Kind,
  OperationDefinitionNode,
  OperationTypeNode,
  parse,
} from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { RequestAuthenticator } from '../identity/request-authenticator.js';
import { sessionCookieToken } from '../identity/session-cookie.js';
import { upgradeAllowed } from '../console/origins.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { currentRequestId } from '../logging/request-context.storage.js';
import { asRequest, markQuery } from '../database/database-queue.js';
import { DatabaseFailureMapper, formatError, publicCodeOf } from './format-error.js';
import { DomainException } from '../common/errors/domain.exception.js';
import type { EventBus } from '../pubsub/event-bus.js';
import { introspectionEnabled } from './introspection.js';
import { Loaders } from './loaders.js';
import { clientAddress, type TrustProxy } from '../common/http/trust-proxy.js';
import { countMetaOperation, requestAuthenticationPlugin } from './meta-operations.js';
import {
  checkOperation,
  checkSource,
  checkVariables,
  QueryLimits,
  queryLimitsPlugin,
} from './query-limits.plugin.js';
import { RequestErrorReason, requestRefusal } from './request-errors.js';
import type { RequestContext } from './request-context.js';
import { SESSION_SIGNED_OUT, SocketOperations, WsConnections, WsSocket } from './ws-connections.js';

/** The token of `Bearer <token>`, the only form accepted on either transport. */
function bearer(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return /^\s*Bearer\s+(\S+)\s*$/i.exec(value)?.[1] ?? null;
}

interface WsContext {
  connectionParams?: Record<string, unknown>;
  extra?: { request?: IncomingMessage };
}

/**
 * A socket's token: its connectionParams' bearer, or the console's session cookie when the
 * client sends no token (browsers send it with the upgrade, from the console's own origin only).
 */
function wsToken(arg: WsContext): string | null {
  const params = arg.connectionParams ?? {};
  return (
    bearer(params.authorization ?? params.Authorization ?? params.authToken) ??
    sessionCookieToken(arg.extra?.request)
  );
}

/**
 * Builds the per-request context for HTTP and for each graphql-ws subscription alike. The
 * address (the anonymous rate limit's key) is a forwarded one only from a proxy TRUST_PROXY names.
 */
export function buildContext(
  arg: { req?: IncomingMessage } & WsContext,
  trust: TrustProxy = false,
): RequestContext {
  if (arg.connectionParams !== undefined || arg.extra !== undefined) {
    return {
      requestId: randomUUID(),
      token: wsToken(arg),
      loaders: new Loaders(),
      ip: arg.extra?.request && clientAddress(arg.extra.request, trust),
      transport: 'ws',
    };
  }
  const req = arg.req;
  const header = req?.headers.authorization;
  return {
    requestId: currentRequestId() ?? randomUUID(),
    token: bearer(header) ?? sessionCookieToken(req),
    loaders: new Loaders(),
    req,
    ip: req && clientAddress(req, trust),
    transport: 'http',
  };
}

/** One structured log line per operation: name, type, duration and error codes, never variables. */
function operationLogPlugin(
  databaseFailure?: DatabaseFailureMapper,
): ApolloServerPlugin<RequestContext> {
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
            errors: errors?.map((e) => publicCodeOf(e, databaseFailure)) ?? [],
          });
        },
      };
    },
  };
}

/**
 * The operation's first root field, the metrics' `operation` label: bounded by the schema,
 * unlike the operation name a client chooses.
 */
function rootFieldOf(operation: OperationDefinitionNode | null | undefined): string {
  if (!operation) return '(invalid)';
  const field = operation.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  return field?.kind === Kind.FIELD ? field.name.value : '(fragment)';
}

/**
 * The close sent to every subscriber once the events' delivery resumes after the database went
 * away (events sent meanwhile were lost): 1012, Service Restart, which graphql-ws clients meet
 * by reconnecting and subscribing again, after which a client refetches what it shows.
 */
export const EVENTS_INTERRUPTED = {
  code: 1012,
  reason: 'Events were interrupted: reconnect, subscribe again and refetch.',
};

/**
 * What the GraphQL layer asks of the database module: the domain exception a database failure
 * stands for, and whether it refuses an operation's writes up front (a full disk), so that a
 * mutation is refused before any of it is done rather than half way.
 */
export interface DatabaseState {
  failure(err: unknown): DomainException | null;
  /** Why writes are refused now (a full disk), or null while they are taken. */
  writesRefused(): DomainException | null;
}

/** A mutation refused before it starts while the database takes no writes; null otherwise. */
function refusedMutation(
  database: DatabaseState,
  document: DocumentNode,
  operationName?: string | null,
): DomainException | null {
  const refused = database.writesRefused();
  if (!refused) return null;
  return getOperationAST(document, operationName)?.operation === OperationTypeNode.MUTATION
    ? refused
    : null;
}

function writesRefusedPlugin(database: DatabaseState): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request }) {
          const refused = refusedMutation(database, document, request.operationName);
          if (refused) throw refused;
        },
      };
    },
  };
}

/** A query's statements go before mutations' on the database's connections (database-queue.ts). */
function databaseTurnsPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation === OperationTypeNode.QUERY) markQuery();
        },
      };
    },
  };
}

/** Request counts and latency per operation for /metrics. */
function operationMetricsPlugin(
  metrics: ServiceMetrics,
  databaseFailure?: DatabaseFailureMapper,
): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ operation, errors }) {
          metrics.request(
            rootFieldOf(operation),
            operation?.operation ?? 'unknown',
            errors?.length ? publicCodeOf(errors[0], databaseFailure) : 'ok',
            (performance.now() - started) / 1000,
          );
        },
      };
    },
  };
}

/**
 * An open subscription's stream, counted in keepsake_graphql_subscriptions_active until it ends
 * (done, failed, completed by the client, or closed with its socket). A plain iterator, not an
 * async generator: a generator's return() would wait for the pending next() (the next event).
 */
function countedStream<T>(
  source: AsyncIterableIterator<T>,
  metrics: ServiceMetrics,
): AsyncIterableIterator<T> {
  let open = true;
  metrics.subscriptionOpened();
  const close = () => {
    if (open) {
      open = false;
      metrics.subscriptionClosed();
    }
  };
  return {
    async next() {
      try {
        const step = await source.next();
        if (step.done) close();
        return step;
      } catch (err) {
        close();
        throw err;
      }
    },
    async return(value?: unknown) {
      close();
      return source.return
        ? source.return(value)
        : ({ done: true, value } as IteratorReturnResult<unknown> as IteratorResult<T>);
    },
    async throw(err?: unknown) {
      close();
      if (source.throw) return source.throw(err);
      throw err;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * graphql-ws does not go through Apollo's formatError: its errors are routed through ours so a
 * refused subscription carries the same codes, and no stack, as an HTTP request. Nest passes
 * every option through to graphql-ws but types only some of them, hence the cast.
 */
/**
 * An error graphql-ws sends before any result, as formatError expects it: one graphql-js made
 * of the document itself (no path, nothing thrown under it) is a validation error; one thrown by
 * code while a subscription started keeps what it is, so that it is reported as our own
 * exception's code or as an internal error with no detail, never as the client's mistake.
 */
export function wsRequestError(e: GraphQLError): GraphQLFormattedError {
  if (e.originalError || e.path) return e.toJSON();
  return { ...e.toJSON(), extensions: { code: 'GRAPHQL_VALIDATION_FAILED', ...e.extensions } };
}

function graphqlWsOptions(
  limits: QueryLimits,
  corsOrigins: readonly string[],
  metrics: ServiceMetrics | null,
  authenticator: RequestAuthenticator | null,
  maxOperations: number,
  maxConnectionsPerUser: number,
  database?: DatabaseState,
  bus?: EventBus,
  trust: TrustProxy = false,
): GraphQLWsSubscriptionsConfig {
  const databaseFailure: DatabaseFailureMapper | undefined =
    database && ((err) => database.failure(err));
  // Open sockets, to tell their clients when events they subscribed to may have been missed.
  const sockets = new Set<WsSocket>();
  bus?.onInterrupted(() => {
    new Logger('GraphQL').warn({
      msg: 'events were interrupted: subscribers told to reconnect',
      sockets: sockets.size,
    });
    for (const socket of sockets) socket.close(EVENTS_INTERRUPTED.code, EVENTS_INTERRUPTED.reason);
  });
  const connections = new WsConnections(maxConnectionsPerUser);
  const operations = new SocketOperations();
  authenticator?.onSignedOut((hash) => {
    const closed = connections.signedOut(hash);
    if (closed > 0)
      new Logger('GraphQL').log({ msg: 'signed-out sockets closed', sockets: closed });
  });
  const options: Pick<
    ServerOptions,
    'onConnect' | 'onSubscribe' | 'onNext' | 'onError' | 'onOperation' | 'execute'
  > & {
    path: string;
  } = {
    path: '/graphql',
    // A query or mutation over the socket takes its turns on the database's connections as a
    // request that came in now, a query before mutations, as over HTTP (a subscription's events
    // are resolved outside it).
    execute: (args) =>
      asRequest(() => {
        if (
          getOperationAST(args.document, args.operationName)?.operation === OperationTypeNode.QUERY
        )
          markQuery();
        return execute(args);
      }),
    // Browsers let any page open a WebSocket anywhere: a page from an origin CORS_ORIGINS does
    // not list is refused here (4403), as its HTTP requests are by CORS. A signed-out session's
    // token is refused (4401), and a user past GRAPHQL_WS_MAX_CONNECTIONS_PER_USER (4029).
    onConnect: async (ctx) => {
      const { request, socket } = ctx.extra as { request?: IncomingMessage; socket?: WsSocket };
      if (!upgradeAllowed(request, corsOrigins)) return false;
      const who = authenticator ? await authenticator.connecting(wsToken(ctx as WsContext)) : null;
      if (who === 'revoked') {
        socket?.close(SESSION_SIGNED_OUT.code, SESSION_SIGNED_OUT.reason);
        return false;
      }
      if (socket) {
        if (!connections.admit(socket, who)) return false;
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      }
      return true;
    },
    // The same limits as over HTTP (Apollo's plugins do not run here): depth, complexity, the
    // cost of searches and replies, introspection. A document that does not parse is left to
    // graphql-ws, which reports it.
    onSubscribe: async (ctx, id, payload) => {
      const nested = checkSource(payload.query) ?? checkVariables(payload.variables);
      if (nested) return [nested];
      let document: DocumentNode;
      try {
        document = parse(payload.query);
      } catch {
        return undefined;
      }
      const writes = database && refusedMutation(database, document, payload.operationName);
      if (writes) return [new GraphQLError(writes.message, { originalError: writes })];
      const refused =
        checkOperation(
          document,
          payload.operationName,
          (payload.variables ?? {}) as Record<string, unknown>,
          limits,
        ) ??
        (authenticator &&
          (await countMetaOperation(
            authenticator,
            document,
            payload.operationName,
            buildContext(ctx as WsContext, trust),
          )));
      if (refused) return [refused];
      // A socket may not hold an unbounded number of operations (each is a listener and a
      // session check per event); those still being checked, like this one, do not count.
      if (!operations.admit(ctx, id, maxOperations)) {
        return [
          requestRefusal(
            RequestErrorReason.TOO_MANY_SUBSCRIPTIONS,
            `This connection holds ${maxOperations} operations open already: complete one first.`,
          ),
        ];
      }
      return undefined;
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
                !limits.introspection,
                databaseFailure,
              ),
            ),
          }
        : undefined,
    // Counted once executed: a stream is open until it ends; a result is an error (or a query).
    onOperation: (_ctx, _id, _payload, args, result) => {
      if (!metrics) return undefined;
      const operation = args.document.definitions.find(
        (d): d is OperationDefinitionNode =>
          d.kind === Kind.OPERATION_DEFINITION &&
          (!args.operationName || d.name?.value === args.operationName),
      );
      const streaming = Symbol.asyncIterator in Object(result);
      const errors = streaming ? undefined : (result as ExecutionResult).errors;
      metrics.request(
        rootFieldOf(operation),
        operation?.operation ?? 'unknown',
        errors?.length ? publicCodeOf(errors[0], databaseFailure) : 'ok',
        null,
      );
      return streaming
        ? countedStream(result as AsyncIterableIterator<ExecutionResult>, metrics)
        : undefined;
    },
    onError: (_ctx, _id, _payload, errors) =>
      errors.map((e) => formatError(wsRequestError(e), e, !limits.introspection, databaseFailure)),
  };
  return options as GraphQLWsSubscriptionsConfig;
}

/**
 * The Apollo landing page runs scripts from Apollo's CDN on this origin, the console's: off in
 * production unless GRAPHQL_LANDING_PAGE turns it on, on elsewhere unless it turns it off.
 */
export function landingPageEnabled(env: {
  GRAPHQL_LANDING_PAGE?: boolean;
  NODE_ENV?: string;
}): boolean {
  return env.GRAPHQL_LANDING_PAGE ?? env.NODE_ENV !== 'production';
}

export function graphqlOptions(
  config: AppConfig,
  metrics: ServiceMetrics | null = null,
  /** Counts operations of meta fields only, which no resolver's guard sees. */
  authenticator: RequestAuthenticator | null = null,
  /** What a failure of the database itself (gone, full) tells the client. */
  database?: DatabaseState,
  /** Whose interruptions close the sockets of subscribers who may have missed events. */
  bus?: EventBus,
): ApolloDriverConfig {
  const databaseFailure: DatabaseFailureMapper | undefined =
    database && ((err) => database.failure(err));
  const env = config.env;
  const introspection = introspectionEnabled(env);
  const limits: QueryLimits = {
    maxDepth: env.GRAPHQL_MAX_DEPTH,
    maxComplexity: env.GRAPHQL_MAX_COMPLEXITY,
    maxExpensiveFields: env.GRAPHQL_MAX_EXPENSIVE_FIELDS,
    defaultPage: 20,
    introspection,
  };
  return {
    path: '/graphql',
    autoSchemaFile: true,
    sortSchema: true,
    introspection,
    graphiql: false,
    includeStacktraceInErrorResponses: false,
    subscriptions: {
      'graphql-ws': graphqlWsOptions(
        limits,
        env.CORS_ORIGINS ?? [],
        metrics,
        authenticator,
        env.GRAPHQL_WS_MAX_SUBSCRIPTIONS,
        env.GRAPHQL_WS_MAX_CONNECTIONS_PER_USER,
        database,
        bus,
        env.TRUST_PROXY,
      ),
    },
    context: (arg: Parameters<typeof buildContext>[0]) => buildContext(arg, env.TRUST_PROXY),
    formatError: (formatted, error) =>
      formatError(formatted, error, !introspection, databaseFailure),
    plugins: [
      databaseTurnsPlugin(),
      landingPageEnabled(env)
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true })
        : ApolloServerPluginLandingPageDisabled(),
      queryLimitsPlugin(limits),
      ...(database ? [writesRefusedPlugin(database)] : []),
      ...(authenticator ? [requestAuthenticationPlugin(authenticator)] : []),
      operationLogPlugin(databaseFailure),
      ...(metrics ? [operationMetricsPlugin(metrics, databaseFailure)] : []),
    ],
  };
}
