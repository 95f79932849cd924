import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RateLimitService } from '../../rate-limit/rate-limit.service.js';
import { AuthService } from '../auth.service.js';
import { IdentityErrorCode, IdentityException } from '../identity.exception.js';
import type { UserEntity } from '../user.entity.js';
import { UsersService } from '../users.service.js';

/** An HTTP request that passed HttpAuthGuard. */
export interface AuthenticatedRequest extends Request {
  user: UserEntity;
}

/**
 * The same authentication and rate limits as GraphQL's, for the few plain HTTP routes (file
 * uploads and downloads): "Authorization: Bearer <token>".
 */
@Injectable()
export class HttpAuthGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly limits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = req.headers.authorization;
    const token = typeof header === 'string' ? /^\s*Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : null;
    if (!token) {
      await this.limits.anonymous(req.socket.remoteAddress);
      throw new IdentityException(
        IdentityErrorCode.MISSING_TOKEN,
        'Sign in first: send "Authorization: Bearer <token>".',
      );
    }
    let claims: Awaited<ReturnType<AuthService['verify']>>;
    try {
      claims = await this.auth.verify(token);
    } catch (err) {
      await this.limits.anonymous(req.socket.remoteAddress);
      throw err;
    }
    req.user = await this.users.fromClaims(claims);
    await this.limits.request(req.user.id);
    return true;
  }
}
