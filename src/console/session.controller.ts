import { Controller, Delete, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainHttpExceptionFilter } from '../common/errors/domain-http.filter.js';
import { RequestAuthenticator } from '../identity/request-authenticator.js';
import { clearSessionCookie, setSessionCookie } from '../identity/session-cookie.js';
import { ConsoleErrorCode, ConsoleException } from './console.exception.js';
import { originAllowed } from './origins.js';

/**
 * Where the console keeps its token between page loads: POST /app/session with the token as a
 * bearer sets it in an HttpOnly cookie (until the token expires), DELETE /app/session signs out.
 * Only the console's own origin may do either: another page may neither plant a session nor end
 * one.
 */
@Controller('app/session')
@UseFilters(DomainHttpExceptionFilter)
export class SessionController {
  constructor(private readonly authenticator: RequestAuthenticator) {}

  @Post()
  @HttpCode(200)
  async open(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    this.assertSameOrigin(req);
    const token = /^\s*Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
    const { user, expiresAt } = await this.authenticator.authenticate(
      token,
      req.socket.remoteAddress,
    );
    await this.authenticator.request(user);
    setSessionCookie(req, res, token!, expiresAt);
    return { expiresAt: expiresAt.toISOString() };
  }

  @Delete()
  @HttpCode(204)
  close(@Req() req: Request, @Res({ passthrough: true }) res: Response): void {
    this.assertSameOrigin(req);
    clearSessionCookie(req, res);
  }

  private assertSameOrigin(req: Request): void {
    const origin = req.headers.origin;
    if (origin === undefined || !originAllowed(origin, req.headers.host, [])) {
      throw new ConsoleException(
        ConsoleErrorCode.CROSS_ORIGIN,
        "Only the console's own pages may open or end its session.",
      );
    }
  }
}
