import { IdentityErrorCode, IdentityException } from '../identity/identity.exception.js';
import { EventBus, RevocationEvent } from '../pubsub/event-bus.js';
import type { RequestContext } from './request-context.js';

/**
 * What a bound subscription yields, once, in place of an event when it must end: the field's
 * resolver (wrapped with `unlessEnded`) throws its error, so the client receives a result with
 * that error (and its stable `extensions.code`), then completion.
 */
export class SubscriptionEnded {
  constructor(readonly error: unknown) {}
}

export interface SessionBounds<T = unknown> {
  /**
   * Throws (a DomainException) when the subscriber may no longer see what they subscribed to.
   * Runs before every event is delivered (with the event) and whenever a revocation topic
   * signals (with null).
   */
  check: (event: T | null) => Promise<unknown>;
  /** Topics whose events mean access may just have been lost (member removed, deleted). */
  revokedBy?: string[];
  /**
   * For streams of many small events (reply deltas): a passed check is trusted for this long
   * before an event runs it again. Revocation signals always run it at once. Default 0.
   */
  trustPassedCheckMs?: number;
}

/** setTimeout's longest delay; a later expiry is reached by re-arming. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Binds a subscription's event stream to the session that opened it: it ends with
 * UNAUTHENTICATED when the token expires, and with the check's error when access is lost,
 * noticed before the next event or at once when a revocation topic signals.
 */
export function boundToSession<T>(
  bus: EventBus,
  context: RequestContext,
  source: AsyncIterableIterator<T>,
  bounds: SessionBounds<T>,
): AsyncIterableIterator<T | SubscriptionEnded> {
  let finished = false;
  let pending: Promise<IteratorResult<T>> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let signalEnd!: (reason: SubscriptionEnded | null) => void;
  const ended = new Promise<SubscriptionEnded | null>((resolve) => (signalEnd = resolve));
  const listeners = (bounds.revokedBy ?? []).map((topic) => bus.subscribe<RevocationEvent>(topic));

  const end = (error: unknown) => signalEnd(new SubscriptionEnded(error));
  const close = async () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    signalEnd(null);
    await Promise.allSettled([source.return?.(), ...listeners.map((l) => l.return?.())]);
  };

  const expiresAt = context.tokenExpiresAt?.getTime();
  if (expiresAt !== undefined) {
    const arm = () => {
      const wait = expiresAt - Date.now();
      if (wait <= 0) {
        end(new IdentityException(IdentityErrorCode.TOKEN_EXPIRED, 'The token has expired.'));
        return;
      }
      timer = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
      timer.unref();
    };
    arm();
  }

  const userId = context.user?.id;
  for (const listener of listeners) {
    void (async () => {
      for (;;) {
        const signal = await listener.next().catch(() => ({ done: true as const, value: null }));
        if (signal.done || finished) return;
        if (signal.value?.userId && signal.value.userId !== userId) continue;
        try {
          await bounds.check(null);
        } catch (err) {
          end(err);
          return;
        }
      }
    })();
  }

  let passedAt = -Infinity;
  const checkEvent = async (event: T) => {
    if (performance.now() - passedAt < (bounds.trustPassedCheckMs ?? 0)) return;
    await bounds.check(event);
    passedAt = performance.now();
  };

  const done = (): IteratorResult<T | SubscriptionEnded> => ({ done: true, value: undefined });
  const stop = async (reason: SubscriptionEnded | null) => {
    await close();
    return reason ? { done: false as const, value: reason } : done();
  };

  return {
    async next() {
      if (finished) return done();
      pending ??= source.next();
      const outcome = await Promise.race([
        pending.then((item) => ({ item })),
        ended.then((reason) => ({ reason })),
      ]).catch(async (err: unknown) => {
        await close();
        throw err;
      });
      if ('reason' in outcome) return stop(outcome.reason);
      pending = null;
      if (outcome.item.done) {
        await close();
        return done();
      }
      try {
        await checkEvent(outcome.item.value);
      } catch (err) {
        return stop(new SubscriptionEnded(err));
      }
      return { done: false, value: outcome.item.value };
    },
    async return() {
      await close();
      return done();
    },
    async throw(err: unknown) {
      await close();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** Wraps a subscription's `resolve`: an end marker becomes the error it carries. */
export function unlessEnded<P, R>(
  resolve: (payload: P) => R,
): (payload: P | SubscriptionEnded) => R {
  return (payload) => {
    if (payload instanceof SubscriptionEnded) throw payload.error;
    return resolve(payload);
  };
}

/**
 * The events of `source` that `map` turns into a value (null drops one), in order. Ending it
 * (the client unsubscribes) ends the source, even while it waits for the next event.
 */
export function filterMap<T, U>(
  source: AsyncIterableIterator<T>,
  map: (value: T) => Promise<U | null>,
): AsyncIterableIterator<U> {
  const done = (): IteratorResult<U> => ({ done: true, value: undefined });
  return {
    async next() {
      for (;;) {
        const item = await source.next();
        if (item.done) return done();
        const mapped = await map(item.value).catch(() => null);
        if (mapped !== null) return { done: false, value: mapped };
      }
    },
    async return() {
      await source.return?.();
      return done();
    },
    async throw(err: unknown) {
      await source.return?.();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
