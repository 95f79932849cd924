import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { RequestContext } from '../../graphql/request-context.js';
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
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const ctx = GqlExecutionContext.create(context).getContext<RequestContext>();
    if (ctx.user) return true;
    if (!ctx.token) {
      throw new IdentityException(
        IdentityErrorCode.MISSING_TOKEN,
        'Sign in first: send "Authorization: Bearer <token>".',
      );
    }
    const claims = await this.auth.verify(ctx.token);
    ctx.user = await this.users.fromClaims(claims);
    ctx.tokenExpiresAt = claims.expiresAt;
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
