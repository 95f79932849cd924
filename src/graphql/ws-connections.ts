import type { ConnectionIdentity } from '../identity/request-authenticator.js';

/** What graphql-ws's server hands over as `extra.socket`: the `ws` socket, as far as used here. */
export interface WsSocket {
  close(code: number, reason: string): void;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The close sent to a socket whose session signed out (DELETE /app/session), on every instance,
 * and to one opened with such a token. graphql-ws's 4401: its clients do not reconnect.
 */
export const SESSION_SIGNED_OUT = {
  code: 4401,
  reason: 'The session was signed out: sign in again.',
};

/**
 * The close of a socket over GRAPHQL_WS_MAX_CONNECTIONS_PER_USER: a code of its own, which
 * graphql-ws clients retry after a pause (by then another of the user's sockets may have closed).
 */
export const TOO_MANY_CONNECTIONS = {
  code: 4029,
  reason: 'Too many connections for this user: close one first.',
};

/**
 * This instance's open graphql-ws sockets: counted per user (the token's subject) for the
 * per-user cap, and listed per session (the token's hash) to close them when it signs out.
 * A socket opened without a valid token is not counted: it can run no operation.
 */
export class WsConnections {
  private readonly perUser = new Map<string, number>();
  private readonly perSession = new Map<string, Set<WsSocket>>();

  constructor(private readonly maxPerUser: number) {}

  /** Registers a socket, or closes it (TOO_MANY_CONNECTIONS) and answers false. */
  admit(socket: WsSocket, who: ConnectionIdentity | null): boolean {
    if (!who) return true;
    const held = this.perUser.get(who.subject) ?? 0;
    if (held >= this.maxPerUser) {
      socket.close(TOO_MANY_CONNECTIONS.code, TOO_MANY_CONNECTIONS.reason);
      return false;
    }
    this.perUser.set(who.subject, held + 1);
    let sockets = this.perSession.get(who.tokenHash);
    if (!sockets) this.perSession.set(who.tokenHash, (sockets = new Set()));
    sockets.add(socket);
    socket.once('close', () => {
      const left = (this.perUser.get(who.subject) ?? 1) - 1;
      if (left > 0) this.perUser.set(who.subject, left);
      else this.perUser.delete(who.subject);
      sockets.delete(socket);
      if (sockets.size === 0 && this.perSession.get(who.tokenHash) === sockets) {
        this.perSession.delete(who.tokenHash);
      }
    });
    return true;
  }

  /** Closes the sockets of a session that signed out; answers how many. */
  signedOut(tokenHash: string): number {
    const sockets = [...(this.perSession.get(tokenHash) ?? [])];
    for (const socket of sockets) socket.close(SESSION_SIGNED_OUT.code, SESSION_SIGNED_OUT.reason);
    return sockets.length;
  }
}

/** graphql-ws's per-socket context, as far as used here: the ids of its operations. */
interface OperationsContext {
  subscriptions: Record<string, unknown>;
}

/**
 * The operations one socket holds open, for GRAPHQL_WS_MAX_SUBSCRIPTIONS: those accepted and not
 * yet ended. graphql-ws lists an id from the moment its subscribe message arrives, while the
 * checks before it (onSubscribe) still run: a burst of subscribes must not count ids still
 * pending, or it refuses far more than the limit says.
 */
export class SocketOperations {
  private readonly accepted = new WeakMap<OperationsContext, Set<string>>();

  /**
   * Whether operation `id` may start; if so it is counted from now. Call last in onSubscribe,
   * with no await between this and accepting it.
   */
  admit(ctx: OperationsContext, id: string, max: number): boolean {
    let ids = this.accepted.get(ctx);
    if (!ids) this.accepted.set(ctx, (ids = new Set()));
    // Ended operations leave graphql-ws's list (whichever way they end); an id in use again
    // (graphql-ws refuses one still open) names a new operation.
    ids.delete(id);
    for (const other of ids) if (!(other in ctx.subscriptions)) ids.delete(other);
    if (ids.size >= max) return false;
    ids.add(id);
    return true;
  }
}
