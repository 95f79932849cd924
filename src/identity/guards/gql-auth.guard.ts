import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { RequestContext } from '../../graphql/request-context.js';
import { IdentityErrorCode, IdentityException } from '../identity.exception.js';
import { RequestAuthenticator } from '../request-authenticator.js';

/**
 * Authenticates every query, mutation and subscription of the resolver it guards, over HTTP
 * (Authorization header) and graphql-ws (connectionParams) alike.
 */
@Injectable()
export class GqlAuthGuard implements CanActivate {
  constructor(private readonly authenticator: RequestAuthenticator) {}

  /** Runs for each root field (aliases included), so each counts against the rate limits. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const ctx = GqlExecutionContext.create(context).getContext<RequestContext>();
    if (!ctx.user) {
      const { user, expiresAt } = await this.authenticator.authenticate(ctx.token, ctx.ip);
      ctx.user = user;
      ctx.tokenExpiresAt = expiresAt;
    }
    await this.authenticator.request(ctx.user);
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
