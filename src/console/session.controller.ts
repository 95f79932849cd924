import { Controller, Delete, HttpCode, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { decodeJwt } from 'jose';
import { DomainHttpExceptionFilter } from '../common/errors/domain-http.filter.js';
import { AuthService } from '../identity/auth.service.js';
import { RequestAuthenticator } from '../identity/request-authenticator.js';
import {
  clearSessionCookie,
  idTokenCookie,
  sessionCookieToken,
  setSessionCookie,
} from '../identity/session-cookie.js';
import { SessionRevocations } from '../identity/session-revocations.js';
import { UsersService } from '../identity/users.service.js';
import { ConsoleErrorCode, ConsoleException } from './console.exception.js';
import { emailOf, nameOf, OidcService } from './oidc.service.js';
import { originAllowed } from './origins.js';

/**
 * Where the console keeps its token between page loads: POST /app/session with the token as a
 * bearer sets it in an HttpOnly cookie (until the token expires), DELETE /app/session signs out:
 * the session's token is revoked on every instance until it expires, and its sockets closed.
 * Only the console's own origin may do either: another page may neither plant a session nor end
 * one. With an OpenID Connect provider, opening the session also reads who signed in from the
 * provider's ID token and userinfo, and closing it can end the provider's session too.
 */
@Controller('app/session')
@UseFilters(DomainHttpExceptionFilter)
export class SessionController {
  constructor(
    private readonly authenticator: RequestAuthenticator,
    private readonly users: UsersService,
    private readonly oidc: OidcService,
    private readonly auth: AuthService,
    private readonly revocations: SessionRevocations,
  ) {}

  @Post()
  @HttpCode(200)
  async open(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    this.assertSameOrigin(req);
    const token = bearerOf(req);
    // req.ip: the forwarded client's address behind a proxy TRUST_PROXY names, else the socket's.
    const { user, expiresAt } = await this.authenticator.authenticate(token, req.ip);
    await this.authenticator.request(user);
    const body = (req.body ?? {}) as { idToken?: unknown };
    const idToken = typeof body.idToken === 'string' && body.idToken ? body.idToken : null;
    if (this.oidc.configured) {
      // The access token was verified above; its claims come first, then the ID token's and
      // userinfo's for what it leaves out (many providers put only `sub` in access tokens).
      const claims = decodeJwt(token!) as Record<string, unknown>;
      const signIn = await this.oidc.signInProfile(String(claims.sub), token!, idToken);
      const own = emailOf(claims);
      await this.users.syncSignIn(user, {
        email: own.stated ? own.email : signIn.email,
        emailStated: own.stated || signIn.emailStated,
        name: nameOf(claims) ?? signIn.name,
      });
    }
    setSessionCookie(req, res, token!, expiresAt, this.oidc.configured ? idToken : null);
    return { expiresAt: expiresAt.toISOString() };
  }

  /**
   * Signs out of the console; with `?provider=true`, also answers where to end the provider's
   * session (RP-initiated logout), when it offers one: the console goes there next, and the
   * provider sends the browser back to /app/signed-out.
   */
  @Delete()
  @HttpCode(200)
  async close(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Query('provider') provider?: string,
  ): Promise<{ endSessionUrl: string | null }> {
    this.assertSameOrigin(req);
    const hint = idTokenCookie(req);
    // The cookie's token, and the bearer the page may hold in memory: neither opens anything
    // afterwards. Revoked before the cookie is cleared, so a failure leaves the session whole.
    const tokens = new Set([sessionCookieToken(req), bearerOf(req)]);
    for (const token of tokens) if (token) await this.revokeIfValid(token);
    clearSessionCookie(req, res);
    if (provider !== 'true') return { endSessionUrl: null };
    const returnTo = `${req.headers.origin}/app/signed-out`;
    return { endSessionUrl: await this.oidc.endSessionUrl(returnTo, hint) };
  }

  /** A token that is not valid (expired, forged) opens nothing already: nothing to store. */
  private async revokeIfValid(token: string): Promise<void> {
    const claims = await this.auth.verify(token).catch(() => null);
    if (claims) await this.revocations.revoke(token, claims.expiresAt);
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

function bearerOf(req: Request): string | null {
  return /^\s*Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
}
