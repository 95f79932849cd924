import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID Connect provider for the browser tests: npm's oidc-provider (the certified
 * implementation), with its development login and consent pages, PKCE for the console's public
 * client, JWT access tokens for the API as a resource server, refresh tokens when asked, and
 * RP-initiated logout. Its access tokens carry the subject only, as many providers' do by
 * default; names and emails come in its ID tokens.
 */
export interface ProviderAccount {
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface RealOidcProvider {
  issuer: string;
  jwksUrl: string;
  /** The API's audience (the resource its access tokens are for). */
  audience: string;
  /** Each token request's form, in order (authorization_code, refresh_token). */
  tokenRequests: URLSearchParams[];
  /** Gives the provider the console's address (its redirect URIs), once the service listens. */
  serve(consoleBase: string): void;
  close(): Promise<void>;
}

/** A page without fonts from elsewhere (the tests run without the internet). */
function logoutSource(ctx: { body: string; host: string }, form: string) {
  ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head>
<body><h1>Do you want to sign out of ${ctx.host}?</h1>${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button></body></html>`;
}

export async function startRealOidcProvider(options: {
  clientId: string;
  accounts: Record<string, ProviderAccount>;
  accessTokenTtlSeconds?: number;
  refreshTokens?: boolean;
}): Promise<RealOidcProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const tokenRequests: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/token')) {
      // A copy of the form for the test; oidc-provider reads the stream itself.
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        tokenRequests.push(new URLSearchParams(Buffer.concat(chunks).toString())),
      );
    }
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const audience = 'https://keepsake.test/api';
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-1', alg: 'RS256', use: 'sig' };
  const ttl = options.accessTokenTtlSeconds ?? 3600;

  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    audience,
    tokenRequests,
    serve(consoleBase: string) {
      // Its warnings say it runs as a test provider (keys in memory, development login pages):
      // what it is here.
      const warn = console.warn;
      console.warn = () => undefined;
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: options.clientId,
            token_endpoint_auth_method: 'none',
            application_type: 'web',
            redirect_uris: [`${consoleBase}/app/signed-in`],
            post_logout_redirect_uris: [`${consoleBase}/app/signed-out`],
            grant_types: options.refreshTokens
              ? ['authorization_code', 'refresh_token']
              : ['authorization_code'],
            response_types: ['code'],
          },
        ],
        jwks: { keys: [jwk] },
        cookies: { keys: ['a-test-cookie-secret-of-some-length'] },
        claims: {
          openid: ['sub'],
          email: ['email', 'email_verified'],
          profile: ['name'],
        },
        // Names and emails in the ID token (not only at userinfo, whose access tokens here are
        // the API's): what the console's sign-in reads.
        conformIdTokenClaims: false,
        async findAccount(_ctx: unknown, id: string) {
          const account = options.accounts[id];
          if (!account) return undefined;
          return { accountId: id, claims: async () => ({ sub: id, ...account }) };
        },
        issueRefreshToken: async (
          _ctx: unknown,
          client: { grantTypeAllowed(t: string): boolean },
        ) => client.grantTypeAllowed('refresh_token'),
        clientBasedCORS: () => true,
        ttl: { AccessToken: ttl, IdToken: ttl },
        features: {
          devInteractions: { enabled: true },
          rpInitiatedLogout: { enabled: true, logoutSource },
          resourceIndicators: {
            enabled: true,
            defaultResource: () => audience,
            useGrantedResource: () => true,
            getResourceServerInfo: () => ({
              scope: 'openid profile email',
              audience,
              accessTokenTTL: ttl,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'RS256' } },
            }),
          },
        },
      });
      console.warn = warn;
      handler = provider.callback();
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
