/**
 * Who is signed in: a bearer token the API accepts, from the OIDC provider or, in development,
 * pasted by hand. No script can read it once the page that received it is gone: the service
 * keeps it in an HttpOnly cookie (POST /app/session), sent with this origin's requests only,
 * and this page holds it in memory. localStorage keeps only what is not secret (the kind of
 * sign-in and when it expires), so that a reload, or another tab, knows a session is open.
 */
export type SessionKind = 'oidc' | 'development';

export interface Session {
  /**
   * The token while the page that received it is open; empty in a page loaded later, whose
   * requests the session cookie authenticates.
   */
  token: string;
  kind: SessionKind;
  /** Seconds since the epoch, from the token's exp claim when it has one. */
  expiresAt: number | null;
}

const KEY = 'keepsake.console.session';
const SESSION_PATH = `${import.meta.env.BASE_URL}session`;

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
    const stored = JSON.parse(raw) as Partial<Session>;
    // An older console kept the token itself here, where any script of the origin could read
    // it: it goes, and its holder signs in again.
    if (typeof stored.token === 'string' && stored.token !== '') {
      localStorage.removeItem(KEY);
      return null;
    }
    if (stored.kind !== 'oidc' && stored.kind !== 'development') return null;
    return { token: '', kind: stored.kind, expiresAt: stored.expiresAt ?? null };
  } catch {
    return null;
  }
}

/**
 * Keeps the session: this page goes on with the token in memory, pages loaded later use the
 * cookie /app/session sets. Resolves once the service has it (and, with a provider, has read who
 * signed in from the ID token), so that what the console shows next is up to date.
 */
export async function saveSession(
  token: string,
  kind: SessionKind,
  idToken: string | null = null,
): Promise<Session> {
  const session = { token, kind, expiresAt: tokenExpiry(token) };
  localStorage.setItem(KEY, JSON.stringify({ kind, expiresAt: session.expiresAt }));
  await fetch(SESSION_PATH, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(idToken ? { idToken } : {}),
  }).catch(() => undefined);
  return session;
}

/**
 * Ends the console's session; with `provider`, also asks where to end the provider's session
 * (RP-initiated logout): the URL to go to, or null when the provider offers none.
 */
export async function clearSession(provider = false): Promise<string | null> {
  localStorage.removeItem(KEY);
  try {
    const res = await fetch(`${SESSION_PATH}${provider ? '?provider=true' : ''}`, {
      method: 'DELETE',
      keepalive: true,
    });
    const body = (await res.json()) as { endSessionUrl?: string | null };
    return body.endSessionUrl ?? null;
  } catch {
    return null;
  }
}
