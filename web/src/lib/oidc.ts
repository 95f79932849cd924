import { InMemoryWebStorage, UserManager, WebStorageStateStore } from 'oidc-client-ts';
import type { ConsoleSettings } from './settings';

/**
 * Authorization code with PKCE against the configured provider (oidc-client-ts does the PKCE,
 * state and nonce). The console sends the provider's access token to the API, which verifies it
 * with JWKS_URL, JWT_ISSUER and JWT_AUDIENCE, and its ID token to /app/session, which reads who
 * signed in from it (and from userinfo).
 */
export function userManager(oidc: NonNullable<ConsoleSettings['oidc']>): UserManager {
  const base = `${location.origin}${import.meta.env.BASE_URL}`;
  return new UserManager({
    authority: oidc.issuer,
    client_id: oidc.clientId,
    redirect_uri: `${base}signed-in`,
    post_logout_redirect_uri: `${base}signed-out`,
    response_type: 'code',
    scope: oidc.scopes,
    // The provider's tokens (a refresh token too) stay in this page's memory, where no other
    // script reads them; the access token goes on in the session cookie (session.ts).
    userStore: new WebStorageStateStore({ store: new InMemoryWebStorage() }),
    // PKCE's verifier and state live only while this tab makes the round trip.
    stateStore: new WebStorageStateStore({ store: sessionStorage }),
    // No hidden iframe, ever: oidc-client-ts would renew in one when it has no refresh token
    // (and watch the provider's session in another), which the console's CSP forbids. The
    // console renews with the refresh token itself when the provider gave one (app.tsx), and
    // otherwise says when the sign-in ends.
    automaticSilentRenew: false,
    monitorSession: false,
  });
}
