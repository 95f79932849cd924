import { UserManager, WebStorageStateStore } from 'oidc-client-ts';
import type { ConsoleSettings } from './settings';

/**
 * Authorization code with PKCE against the configured provider (oidc-client-ts does the PKCE,
 * state and nonce). The console sends the provider's access token to the API, which verifies it
 * with JWKS_URL, JWT_ISSUER and JWT_AUDIENCE.
 */
export function userManager(oidc: NonNullable<ConsoleSettings['oidc']>): UserManager {
  const base = `${location.origin}${import.meta.env.BASE_URL}`;
  return new UserManager({
    authority: oidc.issuer,
    client_id: oidc.clientId,
    redirect_uri: `${base}signed-in`,
    response_type: 'code',
    scope: oidc.scopes,
    userStore: new WebStorageStateStore({ store: localStorage }),
    // Renewal with the refresh token, when the provider gives one (no hidden iframe).
    automaticSilentRenew: true,
  });
}
