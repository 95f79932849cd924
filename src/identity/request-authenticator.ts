import { Injectable } from '@nestjs/common';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { AuthService } from './auth.service.js';
import { IdentityErrorCode, IdentityException } from './identity.exception.js';
import type { UserEntity } from './user.entity.js';
import { UsersService } from './users.service.js';

/**
 * Turns a request's bearer token into its user, for every transport (GraphQL over HTTP and
 * graphql-ws, the plain HTTP routes). A missing or bad token spends the caller's address's
 * anonymous budget: guessing tokens is an anonymous caller's game.
 */
@Injectable()
export class RequestAuthenticator {
  constructor(
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly limits: RateLimitService,
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
    return { user: await this.users.fromClaims(claims), expiresAt: claims.expiresAt };
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
