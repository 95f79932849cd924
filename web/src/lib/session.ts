/**
 * Who is signed in: a bearer token the API accepts, from the OIDC provider or, in development,
 * pasted by hand. Kept in localStorage so a reload keeps the session (per browser profile).
 */
export type SessionKind = 'oidc' | 'development';

export interface Session {
  token: string;
  kind: SessionKind;
  /** Seconds since the epoch, from the token's exp claim when it has one. */
  expiresAt: number | null;
}

const KEY = 'keepsake.console.session';

/** The token's exp claim, read without verifying it: the API does that. */
export function tokenExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as {
      exp?: unknown;
    };
    return typeof json.exp === 'number' ? json.exp : null;
  } catch {
    return null;
  }
}

export function isExpired(session: Session, now = Date.now()): boolean {
  return session.expiresAt !== null && session.expiresAt * 1000 <= now;
}

export function readSession(): Session | null {
  const raw = localStorage.getItem(KEY);
  if (!raw) return null;
  try {
    const session = JSON.parse(raw) as Session;
    return typeof session.token === 'string' ? session : null;
  } catch {
    return null;
  }
}

export function saveSession(token: string, kind: SessionKind): Session {
  const session = { token, kind, expiresAt: tokenExpiry(token) };
  localStorage.setItem(KEY, JSON.stringify(session));
  return session;
}

export function clearSession(): void {
  localStorage.removeItem(KEY);
}
