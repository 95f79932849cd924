import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RequestAuthenticator } from '../request-authenticator.js';
import { sessionCookieToken } from '../session-cookie.js';
import type { UserEntity } from '../user.entity.js';

/** An HTTP request that passed HttpAuthGuard. */
export interface AuthenticatedRequest extends Request {
  user: UserEntity;
}

/**
 * The same authentication and rate limits as GraphQL's, for the few plain HTTP routes (file
 * uploads and downloads): "Authorization: Bearer <token>", or the console's session cookie.
 */
@Injectable()
export class HttpAuthGuard implements CanActivate {
  constructor(private readonly authenticator: RequestAuthenticator) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = req.headers.authorization;
    const token =
      (typeof header === 'string' ? /^\s*Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : null) ??
      sessionCookieToken(req);
    // req.ip: the forwarded client's address behind a proxy TRUST_PROXY names, else the socket's.
    req.user = (await this.authenticator.authenticate(token, req.ip)).user;
    await this.authenticator.request(req.user);
    return true;
  }
}
