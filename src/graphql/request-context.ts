import type { IncomingMessage } from 'node:http';
import type { UserEntity } from '../identity/user.entity.js';
import type { Loaders } from './loaders.js';

/** The GraphQL context of one HTTP request or one subscription operation. */
export interface RequestContext {
  requestId: string;
  /** The raw bearer token, from the Authorization header or graphql-ws connectionParams. */
  token: string | null;
  /** Set by GqlAuthGuard once the token is verified. */
  user?: UserEntity;
  /** Set with `user`: when the token expires; a subscription opened with it ends then. */
  tokenExpiresAt?: Date;
  loaders: Loaders;
  /** Subscriptions only: loaders per event, keyed by the event's root value. */
  eventLoaders?: WeakMap<object, Loaders>;
  req?: IncomingMessage;
  /** The client's address (the socket's peer), for the anonymous rate limit. */
  ip?: string;
  transport: 'http' | 'ws';
}
