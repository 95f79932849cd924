import { ConfigOf, ConfigParseError, defineVariables, text, url } from '../config/config-spec.js';

/** A comma-separated list of origins (scheme://host[:port]), each exactly as a browser sends it. */
export const originList = (raw: string): string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      let parsed: URL;
      try {
        parsed = new URL(entry);
      } catch {
        throw new ConfigParseError(
          `has "${entry}", which is not an origin such as https://a.example`,
        );
      }
      if (!['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== entry) {
        throw new ConfigParseError(
          `has "${entry}", which is not an origin such as https://a.example (no path, no trailing slash)`,
        );
      }
      return entry;
    });

export const consoleVariables = defineVariables({
  CORS_ORIGINS: {
    description:
      'Other origins whose frontends may call the API from a browser, comma-separated (https://a.example,https://b.example), over HTTP (CORS, with credentials) and graphql-ws alike. Unset: same origin only.',
    parse: originList,
  },
  OIDC_ISSUER: {
    description:
      'OpenID Connect provider the family console signs in with (authorization code with PKCE, in the browser). Needs OIDC_CLIENT_ID, and JWKS_URL (or JWT_PUBLIC_KEY) with JWT_ISSUER and JWT_AUDIENCE so its access tokens are accepted. Unset: development sign-in with a pasted token.',
    parse: url,
  },
  OIDC_CLIENT_ID: {
    description: 'The console’s public client id at OIDC_ISSUER.',
    parse: text,
  },
  OIDC_PROVIDER_NAME: {
    description:
      'The provider’s name as people know it, on the sign-in page (“Sign in with …”) and when signing out of it too. Unset: the host name of OIDC_ISSUER.',
    parse: text,
  },
  OIDC_SCOPES: {
    description: 'Scopes the console asks OIDC_ISSUER for.',
    default: 'openid profile email',
    parse: text,
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof consoleVariables> {}
}

/** OIDC sign-in is all or nothing, and only useful when the service accepts the provider's tokens. */
export function validateConsoleConfig(env: {
  OIDC_ISSUER?: string;
  OIDC_CLIENT_ID?: string;
  JWKS_URL?: string;
  JWT_PUBLIC_KEY?: string;
}): string[] {
  const problems: string[] = [];
  if (env.OIDC_ISSUER && !env.OIDC_CLIENT_ID) problems.push('OIDC_ISSUER needs OIDC_CLIENT_ID');
  if (env.OIDC_CLIENT_ID && !env.OIDC_ISSUER) problems.push('OIDC_CLIENT_ID needs OIDC_ISSUER');
  if (env.OIDC_ISSUER && !env.JWKS_URL && !env.JWT_PUBLIC_KEY) {
    problems.push('OIDC_ISSUER needs JWKS_URL or JWT_PUBLIC_KEY to verify the provider’s tokens');
  }
  return problems;
}
