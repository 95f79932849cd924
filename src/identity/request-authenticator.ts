import { Injectable } from '@nestjs/common';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { AuthService } from './auth.service.js';
import { IdentityErrorCode, IdentityException } from './identity.exception.js';
import { SessionRevocations, tokenHash } from './session-revocations.js';
import type { UserEntity } from './user.entity.js';
import { UsersService } from './users.service.js';

/** Who opens a WebSocket: the token's subject, and its session (the token's hash). */
export interface ConnectionIdentity {
  subject: string;
  tokenHash: string;
}

/**
 * Turns a request's bearer token into its user, for every transport (GraphQL over HTTP and
 * graphql-ws, the plain HTTP routes). A missing or bad token spends the caller's address's
 * anonymous budget: guessing tokens is an anonymous caller's game. A signed-out session's
 * token is refused like a bad one (TOKEN_REVOKED).
 */
@Injectable()
export class RequestAuthenticator {
  constructor(
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly limits: RateLimitService,
    private readonly revocations: SessionRevocations,
  ) {}

  async authenticate(
    token: string | null | undefined,
    ip: string | undefined,
  ): Promise<{ user: UserEntity; expiresAt: Date }> {
    if (!token) {
      await this.limits.anonymous(ip);
      throw new IdentityException(
        IdentityErrorCode.MISSING_TOKEN,
        'Sign in first: send "Authorization: Bearer <token>".',
      );
    }
    let claims: Awaited<ReturnType<AuthService['verify']>>;
    try {
      claims = await this.auth.verify(token);
    } catch (err) {
      await this.limits.anonymous(ip);
      throw err;
    }
    if (await this.revocations.isRevoked(token)) {
      await this.limits.anonymous(ip);
      throw revokedError();
    }
    return { user: await this.users.fromClaims(claims), expiresAt: claims.expiresAt };
  }

  /**
   * Whose a WebSocket is, as it opens (nothing counted against any budget: its operations are,
   * one by one): null without a valid token, 'revoked' for a signed-out session's token. While
   * the database cannot say (it is away), the socket is let in: each of its operations is
   * authenticated, and refused, on its own.
   */
  async connecting(token: string | null): Promise<ConnectionIdentity | 'revoked' | null> {
    if (!token) return null;
    let subject: string;
    try {
      subject = (await this.auth.verify(token)).subject;
    } catch {
      return null;
    }
    if (await this.revocations.isRevoked(token).catch(() => false)) return 'revoked';
    return { subject, tokenHash: tokenHash(token) };
  }

  /** Calls `listener` with the hash of every token signed out, on any instance. */
  onSignedOut(listener: (tokenHash: string) => void): () => void {
    return this.revocations.onSignedOut(listener);
  }

  /**
   * Counts one operation that no guard sees (meta fields only): against the user's budget with a
   * valid token, the address's anonymous budget without one; a bad token is refused as anywhere.
   */
  async count(token: string | null | undefined, ip: string | undefined): Promise<void> {
    if (!token) return this.limits.anonymous(ip);
    await this.request((await this.authenticate(token, ip)).user);
  }

  /** Counts one request against the user's budget. */
  request(user: UserEntity): Promise<void> {
    return this.limits.request(user.id);
  }
}

function revokedError(): IdentityException {
  return new IdentityException(
    IdentityErrorCode.TOKEN_REVOKED,
    'This session was signed out: sign in again.',
  );
}
