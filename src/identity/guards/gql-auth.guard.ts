import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { RequestContext } from '../../graphql/request-context.js';
import { RateLimitService } from '../../rate-limit/rate-limit.service.js';
import { AuthService } from '../auth.service.js';
import { IdentityErrorCode, IdentityException } from '../identity.exception.js';
import { UsersService } from '../users.service.js';

/**
 * Authenticates every query, mutation and subscription of the resolver it guards, over HTTP
 * (Authorization header) and graphql-ws (connectionParams) alike.
 */
@Injectable()
export class GqlAuthGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly limits: RateLimitService,
  ) {}

  /** Runs for each root field (aliases included), so each counts against the rate limits. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const ctx = GqlExecutionContext.create(context).getContext<RequestContext>();
    if (!ctx.user) {
      if (!ctx.token) {
        await this.limits.anonymous(ctx.ip);
        throw new IdentityException(
          IdentityErrorCode.MISSING_TOKEN,
          'Sign in first: send "Authorization: Bearer <token>".',
        );
      }
      let claims: Awaited<ReturnType<AuthService['verify']>>;
      try {
        claims = await this.auth.verify(ctx.token);
      } catch (err) {
        // Guessing tokens is an anonymous caller's game: it spends the address's budget.
        await this.limits.anonymous(ctx.ip);
        throw err;
      }
      ctx.user = await this.users.fromClaims(claims);
      ctx.tokenExpiresAt = claims.expiresAt;
    }
    await this.limits.request(ctx.user.id);
    return true;
  }
}

/** Platform administrators only (the token's `admin` claim). Use after GqlAuthGuard. */
@Injectable()
export class PlatformAdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const ctx = GqlExecutionContext.create(context).getContext<RequestContext>();
    if (!ctx.user?.isPlatformAdmin) {
      throw new IdentityException(
        IdentityErrorCode.NOT_PLATFORM_ADMIN,
        'Only platform administrators can do this.',
      );
    }
    return true;
  }
}
