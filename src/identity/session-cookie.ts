import type { IncomingMessage, ServerResponse } from 'node:http';
import { originAllowed } from '../console/origins.js';

/**
 * The family console's session: its bearer token in an HttpOnly cookie, which no script reads
 * (not the console's, not one loaded from elsewhere onto its origin). Browsers send it on their
 * own, so it is honoured only on requests from this service's own origin (CSRF): a page of
 * another site, a sibling subdomain included, or one of CORS_ORIGINS, cannot ride on it.
 */
export const SESSION_COOKIE = 'keepsake_session';

/**
 * The provider's ID token of the console's session, sent back to the provider as the hint of
 * RP-initiated logout. It opens nothing here (its audience is the console's client id): it is
 * sent to /app/session only.
 */
export const ID_TOKEN_COOKIE = 'keepsake_id_token';
const ID_TOKEN_PATH = '/app/session';

/** The session cookie's token, when the request carries one from the service's own origin. */
export function sessionCookieToken(req: IncomingMessage | undefined): string | null {
  const cookie = req?.headers.cookie;
  if (!cookie) return null;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!originAllowed(origin, req.headers.host, [])) return null;
  } else if (req.headers['sec-fetch-site'] !== 'same-origin') {
    // A GET from the console itself (a download) has no Origin but says where it comes from.
    return null;
  }
  return cookieValue(cookie, SESSION_COOKIE);
}

function cookieValue(cookie: string, wanted: string): string | null {
  for (const part of cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === wanted) return value.join('=').trim() || null;
  }
  return null;
}

/** The ID token kept with the console's session, for the logout hint. */
export function idTokenCookie(req: IncomingMessage): string | null {
  return req.headers.cookie ? cookieValue(req.headers.cookie, ID_TOKEN_COOKIE) : null;
}

/**
 * Whether the request reached the service over HTTPS: Express's `req.secure`, which believes
 * X-Forwarded-Proto only from a proxy TRUST_PROXY names (bootstrap.ts); a client's own header
 * is not taken at its word.
 */
function secure(req: IncomingMessage): boolean {
  const express = req as IncomingMessage & { secure?: boolean };
  return express.secure ?? (req.socket as { encrypted?: boolean }).encrypted === true;
}

export function setSessionCookie(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  expiresAt: Date,
  idToken: string | null = null,
): void {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  res.setHeader('set-cookie', [
    cookieHeader(req, SESSION_COOKIE, '/', token, maxAge),
    cookieHeader(req, ID_TOKEN_COOKIE, ID_TOKEN_PATH, idToken ?? '', idToken ? maxAge : 0),
  ]);
}

export function clearSessionCookie(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('set-cookie', [
    cookieHeader(req, SESSION_COOKIE, '/', '', 0),
    cookieHeader(req, ID_TOKEN_COOKIE, ID_TOKEN_PATH, '', 0),
  ]);
}

function cookieHeader(
  req: IncomingMessage,
  name: string,
  path: string,
  value: string,
  maxAge: number,
): string {
  return [
    `${name}=${value}`,
    `Path=${path}`,
    `Max-Age=${maxAge}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure(req) ? ['Secure'] : []),
  ].join('; ');
}
