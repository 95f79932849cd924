/**
 * The engine behind GraphQL subscriptions. Resolvers and services depend on this abstract class
 * only, so a multi-instance engine (PostgreSQL LISTEN/NOTIFY, Redis) can replace the in-process
 * one without touching them. Topics are scoped to a resource: `conversation:<id>:messages`.
 */
export abstract class EventBus {
  abstract publish<T>(topic: string, payload: T): Promise<void>;
  abstract subscribe<T>(topic: string): AsyncIterableIterator<T>;
}

export const topics = {
  conversationMessages: (conversationId: string) => `conversation:${conversationId}:messages`,
  conversationReplyDeltas: (conversationId: string) =>
    `conversation:${conversationId}:reply-deltas`,
  legacyFacts: (legacyId: string) => `legacy:${legacyId}:facts`,
  userMemories: (userId: string) => `user:${userId}:memories`,
  /** A member was removed or left (userId), or the legacy was deleted (userId null). */
  legacyAccessRevoked: (legacyId: string) => `legacy:${legacyId}:access-revoked`,
  conversationDeleted: (conversationId: string) => `conversation:${conversationId}:deleted`,
  /** A participant left a together conversation (userId): their subscriptions on it end. */
  conversationLeft: (conversationId: string) => `conversation:${conversationId}:left`,
};

/** Published on the revocation topics: subscriptions that may be affected re-check access. */
export interface RevocationEvent {
  /** The user who lost access; null or absent: everyone subscribed. */
  userId?: string | null;
}
