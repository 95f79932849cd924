import type { IncomingMessage } from 'node:http';

/**
 * Whether a browser on `origin` may use the API: its own origin (the console under /app) or one
 * listed in CORS_ORIGINS. A request without an Origin header is not from a browser page on
 * another site (curl, servers, the tests' clients) and is left to authentication alone.
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  allowed: readonly string[],
): boolean {
  if (origin === undefined) return true;
  if (allowed.includes(origin)) return true;
  if (!host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The graphql-ws handshake is checked like a CORS request: browsers do not apply CORS to it. */
export function upgradeAllowed(request: IncomingMessage | undefined, allowed: readonly string[]) {
  if (!request) return true;
  const origin = request.headers.origin;
  return originAllowed(origin, request.headers.host, allowed);
}
