import type { Sink } from 'graphql-ws';

/** What graphql-ws's client is given to subscribe with (and sends again on each reconnect). */
interface Payload {
  variables?: Record<string, unknown> | null;
}

/** The turn index an event of a resumable subscription carries (`messageAdded { turnIndex }`). */
function turnIndexOf(value: unknown): number | null {
  const data = (value as { data?: Record<string, unknown> | null } | null)?.data;
  const event = data ? Object.values(data)[0] : null;
  const turn = (event as { turnIndex?: unknown } | null)?.turnIndex;
  return typeof turn === 'number' ? turn : null;
}

/**
 * A subscription that resumes: one whose variables hold `afterTurnIndex` (messageAdded). The
 * graphql-ws client subscribes again with the same payload object when it reconnects (after the
 * service's 1012, a restart, a failover): its `afterTurnIndex` is kept at the last turn
 * received, so the service sends what was stored meanwhile, each turn once. Other
 * subscriptions are left as they are.
 */
export function resuming<T>(payload: Payload, sink: Sink<T>): Sink<T> {
  const given = payload.variables;
  if (!given || !('afterTurnIndex' in given)) return sink;
  const variables = { ...given };
  payload.variables = variables;
  return {
    next(value) {
      const turn = turnIndexOf(value);
      const held = typeof variables.afterTurnIndex === 'number' ? variables.afterTurnIndex : -1;
      if (turn !== null && turn > held) variables.afterTurnIndex = turn;
      sink.next(value);
    },
    error: (err) => sink.error(err),
    complete: () => sink.complete(),
  };
}
