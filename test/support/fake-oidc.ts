import { createHash, randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWK } from 'jose';

/**
 * A minimal OpenID Connect provider for the console's sign-in tests (node:http and jose only):
 * discovery, an authorization endpoint that signs the configured user in at once, a token
 * endpoint that checks the PKCE verifier (S256), a userinfo endpoint, an end-session endpoint
 * and the JWKS the service verifies tokens with. Where the person's name and email go is
 * configurable (`profileIn`): some providers put them in the access token, some in the ID
 * token, some only behind userinfo. The real provider of the browser tests is npm's
 * oidc-provider (oidc-provider.ts).
 */
export type ProfilePlace = 'access_token' | 'id_token' | 'userinfo';
export interface FakeOidcUser {
  sub: string;
  email: string;
  name: string;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | null;
}

export class FakeOidcProvider {
  /** Every authorization request's parameters and every token request's form, in order. */
  readonly authorizations: URLSearchParams[] = [];
  readonly tokenRequests: URLSearchParams[] = [];
  private readonly codes = new Map<string, PendingCode>();

  private constructor(
    private readonly server: Server,
    private readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'],
    private readonly publicKey: Awaited<ReturnType<typeof generateKeyPair>>['publicKey'],
    private readonly jwk: JWK,
    readonly options: {
      clientId: string;
      audience: string;
      user: FakeOidcUser;
      profileIn?: ProfilePlace[];
    },
  ) {}

  /** Userinfo requests' bearer tokens, in order. */
  readonly userinfoRequests: string[] = [];

  static async start(options: {
    clientId: string;
    audience: string;
    user: FakeOidcUser;
    profileIn?: ProfilePlace[];
  }): Promise<FakeOidcProvider> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'fake-1', alg: 'RS256', use: 'sig' };
    const server = createServer();
    const provider = new FakeOidcProvider(server, privateKey, publicKey, jwk, options);
    server.on('request', (req, res) => {
      provider.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) provider.json(res, 500, { error: String(err) });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return provider;
  }

  get issuer(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get jwksUrl(): string {
    return `${this.issuer}/jwks`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private json(res: ServerResponse, status: number, body: unknown) {
    // The console fetches discovery and the token endpoint from its own origin.
    res.writeHead(status, {
      'content-type': 'application/json',
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'content-type, authorization',
    });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', this.issuer);
    if (req.method === 'OPTIONS') return this.json(res, 204, null);
    if (url.pathname === '/.well-known/openid-configuration') {
      return this.json(res, 200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        jwks_uri: this.jwksUrl,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code'],
        userinfo_endpoint: `${this.issuer}/userinfo`,
        end_session_endpoint: `${this.issuer}/logout`,
      });
    }
    if (url.pathname === '/userinfo') {
      const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      this.userinfoRequests.push(bearer);
      const { payload } = await jwtVerify(bearer, this.publicKey).catch(() => ({ payload: null }));
      if (!payload) return this.json(res, 401, { error: 'invalid_token' });
      return this.json(res, 200, {
        sub: payload.sub,
        ...(this.places.includes('userinfo') ? this.profile : {}),
      });
    }
    if (url.pathname === '/jwks') return this.json(res, 200, { keys: [this.jwk] });
    if (url.pathname === '/authorize') return this.authorize(url.searchParams, res);
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      return this.token(new URLSearchParams(body), res);
    }
    return this.json(res, 404, { error: 'not_found' });
  }

  private authorize(params: URLSearchParams, res: ServerResponse) {
    this.authorizations.push(params);
    const redirectUri = params.get('redirect_uri') ?? '';
    if (
      params.get('client_id') !== this.options.clientId ||
      params.get('response_type') !== 'code' ||
      params.get('code_challenge_method') !== 'S256' ||
      !params.get('code_challenge')
    ) {
      return this.json(res, 400, { error: 'invalid_request' });
    }
    const code = randomBytes(16).toString('hex');
    this.codes.set(code, {
      clientId: this.options.clientId,
      redirectUri,
      challenge: params.get('code_challenge')!,
      nonce: params.get('nonce'),
    });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', params.get('state') ?? '');
    res.writeHead(302, { location: back.href });
    res.end();
  }

  private async token(form: URLSearchParams, res: ServerResponse) {
    this.tokenRequests.push(form);
    const pending = this.codes.get(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (
      !pending ||
      form.get('grant_type') !== 'authorization_code' ||
      form.get('redirect_uri') !== pending.redirectUri ||
      challenge !== pending.challenge
    ) {
      return this.json(res, 400, { error: 'invalid_grant' });
    }
    this.codes.delete(form.get('code')!);
    const { audience, clientId } = this.options;
    const profileIn = (place: ProfilePlace) => (this.places.includes(place) ? this.profile : {});
    return this.json(res, 200, {
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid profile email',
      access_token: await this.sign(profileIn('access_token'), audience),
      id_token: await this.sign(
        { ...profileIn('id_token'), ...(pending.nonce ? { nonce: pending.nonce } : {}) },
        clientId,
      ),
    });
  }

  private get places(): ProfilePlace[] {
    return this.options.profileIn ?? ['access_token', 'id_token'];
  }

  private get profile() {
    const { user } = this.options;
    return { email: user.email, email_verified: true, name: user.name };
  }

  /** A token of this provider, as its token endpoint signs them (for tests that skip the browser). */
  sign(
    claims: Record<string, unknown>,
    audience: string,
    options: { sub?: string; issuer?: string; expiresIn?: string } = {},
  ): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'fake-1' })
      .setIssuer(options.issuer ?? this.issuer)
      .setSubject(options.sub ?? this.options.user.sub)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '1h')
      .sign(this.privateKey);
  }
}
