import { request } from 'node:http';
import { introspectionEnabled } from '../../src/graphql/introspection.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/** The reverse proxy in front of the service: another loopback address than the clients'. */
const PROXY = '127.0.0.2';
const INTROSPECT = '{ __schema { queryType { name } } }';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** A POST sent from `from` (a client, or the proxy), with the headers given. */
function post(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  from = '127.0.0.1',
): Promise<Answer> {
  const target = new URL(path, url);
  const text = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: raw ? (JSON.parse(raw) as Answer['body']) : {},
          });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const codeOf = (a: Answer) => String(a.body.errors?.[0]?.extensions?.code ?? 'OK');

/**
 * What a production deployment (NODE_ENV=production) behind a reverse proxy shows to whoever
 * connects: no schema by introspection, and X-Forwarded-Proto and X-Forwarded-For believed from
 * the proxy TRUST_PROXY names only, never from a client that sends them itself.
 */
describe('In production, behind a proxy (TRUST_PROXY)', () => {
  let t: TestApp;
  let user: TestUser;
  let own: string;

  beforeAll(async () => {
    t = await startTestApp({
      NODE_ENV: 'production',
      TRUST_PROXY: PROXY,
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3',
    });
    user = await t.user('exposure-user', { name: 'Ida' });
    own = new URL(t.url).origin;
  }, 120_000);
  afterAll(() => t.close());

  it('answers no introspection, signed in or not, on either transport', async () => {
    const anonymous = await post(
      t.url,
      '/graphql',
      { 'x-forwarded-for': '198.51.100.1' },
      {
        query: INTROSPECT,
      },
      PROXY,
    );
    const signedIn = await t.gql(INTROSPECT, {}, user);
    // Apollo's own rule refuses it over HTTP as a document this API does not answer.
    for (const body of [anonymous.body, signedIn]) {
      expect(body.data ?? null).toBeNull();
      expect(body.errors).toEqual([
        expect.objectContaining({
          message:
            'The operation is not valid for this API (details are hidden while introspection is off).',
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        }),
      ]);
    }
    const overWs = await new Promise<unknown>((resolve) => {
      t.ws(user).subscribe(
        { query: INTROSPECT },
        { next: (v) => resolve(v), error: (e) => resolve(e), complete: () => undefined },
      );
    });
    expect(JSON.stringify(overWs)).toMatch(/INTROSPECTION_DISABLED/);
    expect(JSON.stringify(overWs)).not.toMatch(/queryType/);
    // Apollo's own convention: on elsewhere, and GRAPHQL_INTROSPECTION decides when set.
    expect(introspectionEnabled({ NODE_ENV: 'production' })).toBe(false);
    expect(introspectionEnabled({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: true })).toBe(
      true,
    );
    expect(introspectionEnabled({ NODE_ENV: 'development' })).toBe(true);
    expect(introspectionEnabled({ GRAPHQL_INTROSPECTION: false })).toBe(false);
  });

  it('marks the session cookie Secure for HTTPS the proxy vouches for, not for a client saying so', async () => {
    const open = (headers: Record<string, string>, from?: string) =>
      post(
        t.url,
        '/app/session',
        { authorization: `Bearer ${user.token}`, origin: own, ...headers },
        undefined,
        from,
      );
    const cookies = (a: Answer) => {
      expect(a.status).toBe(200);
      const set = a.headers['set-cookie'] as string[];
      expect(set).toHaveLength(2);
      return set;
    };
    // A client that reaches the service directly and claims HTTPS is not believed.
    for (const cookie of cookies(await open({ 'x-forwarded-proto': 'https' }))) {
      expect(cookie).not.toMatch(/;\s*Secure/);
    }
    // The proxy says the client came over HTTPS: both cookies are Secure.
    for (const cookie of cookies(await open({ 'x-forwarded-proto': 'https' }, PROXY))) {
      expect(cookie).toMatch(/;\s*Secure/);
    }
    // The proxy forwarding plain HTTP: not Secure.
    for (const cookie of cookies(await open({ 'x-forwarded-proto': 'http' }, PROXY))) {
      expect(cookie).not.toMatch(/;\s*Secure/);
    }
  });

  it('counts an anonymous client by the address the proxy forwards, never by one it claims', async () => {
    const anonymous = (forwardedFor: string, from?: string) =>
      post(
        t.url,
        '/graphql',
        { 'x-forwarded-for': forwardedFor },
        { query: '{ me { id } }' },
        from,
      );
    // Directly: whatever it claims, one client is one budget (3 a minute).
    const direct: string[] = [];
    for (const claimed of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']) {
      direct.push(codeOf(await anonymous(claimed)));
    }
    expect(direct).toEqual([
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'RATE_LIMITED',
    ]);
    // Through the proxy: each forwarded client has a budget of its own.
    const first: string[] = [];
    for (let i = 0; i < 4; i++) first.push(codeOf(await anonymous('192.0.2.10', PROXY)));
    expect(first).toEqual([
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'RATE_LIMITED',
    ]);
    expect(codeOf(await anonymous('192.0.2.11', PROXY))).toBe('UNAUTHENTICATED');
  });
});
