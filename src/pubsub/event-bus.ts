import { Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

const logger = new Logger('Events');

/**
 * The engine behind GraphQL subscriptions. Resolvers and services depend on this abstract class
 * only, so a multi-instance engine (PostgreSQL LISTEN/NOTIFY, Redis) can replace the in-process
 * one without touching them. Topics are scoped to a resource: `conversation:<id>:messages`.
 */
export abstract class EventBus {
  private readonly interruptionListeners = new Set<() => void>();

  abstract publish<T>(topic: string, payload: T): Promise<void>;
  abstract subscribe<T>(topic: string): AsyncIterableIterator<T>;

  /**
   * Called when delivery was interrupted and has resumed (the database went away and came
   * back): events sent meanwhile never reached this instance's subscribers, who must be told to
   * resubscribe and refetch. Returns what unregisters it. The in-process bus is never interrupted.
   */
  onInterrupted(listener: () => void): () => void {
    this.interruptionListeners.add(listener);
    return () => this.interruptionListeners.delete(listener);
  }

  protected interrupted(): void {
    for (const listener of this.interruptionListeners) listener();
  }

  /**
   * Publishes news of a change with the transaction that makes it (`manager`'s): delivered once
   * it commits, never if it rolls back. Returns what to call once it has committed: here, the
   * publish itself. The PostgreSQL bus sends its NOTIFY inside the transaction instead, which
   * the server delivers at commit, so the event costs neither a statement after the commit nor a
   * commit of its own; events of one conversation then arrive in the order their turns commit.
   */
  async publishWith<T>(
    manager: EntityManager,
    topic: string,
    payload: T,
  ): Promise<() => Promise<void>> {
    void manager;
    return () => this.publish(topic, payload);
  }

  /**
   * Publishes news of a change once it committed: a lost event must not fail the change (its
   * subscribers still re-check at their next event, or refetch), so a failure is logged as
   * `<what> not published`, never thrown.
   */
  async publishAfterCommit<T>(topic: string, payload: T, what: string): Promise<void> {
    try {
      await this.publish(topic, payload);
    } catch (err) {
      logger.warn({ msg: `${what} not published`, error: String(err) });
    }
  }
}

export const topics = {
  conversationMessages: (conversationId: string) => `conversation:${conversationId}:messages`,
  conversationReplyDeltas: (conversationId: string) =>
    `conversation:${conversationId}:reply-deltas`,
  legacyFacts: (legacyId: string) => `legacy:${legacyId}:facts`,
  legacyStories: (legacyId: string) => `legacy:${legacyId}:stories`,
  /** A member's period summaries in a legacy: theirs alone. */
  memberPeriods: (userId: string, legacyId: string) => `user:${userId}:legacy:${legacyId}:periods`,
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
