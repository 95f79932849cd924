import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { findWebRoot } from '../../src/console/web-root.js';
import { startTestApp, TestApp } from '../support/test-app.js';

/**
 * @pass embedded: the console's files, headers, cookies and CORS are served without the
 * database (src/console reads none).
 */
const FRONTEND = 'https://family.example';

/**
 * Opens graphql-ws with the given Origin (and cookie); resolves with the ack, or the close code.
 * With an operation, resolves once it is answered: its first error's code, or 'subscribed' when
 * a subscription is still open a moment later.
 */
function handshake(
  wsUrl: string,
  token: string,
  origin?: string,
  cookie?: string,
  operation?: string,
): Promise<string | number> {
  return new Promise((resolveResult, reject) => {
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws', {
      headers: { ...(origin ? { origin } : {}), ...(cookie ? { cookie } : {}) },
    });
    const done = (result: string | number) => {
      socket.close();
      resolveResult(result);
    };
    socket.on('open', () =>
      socket.send(
        JSON.stringify({
          type: 'connection_init',
          payload: token ? { authorization: `Bearer ${token}` } : {},
        }),
      ),
    );
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as {
        type: string;
        payload?:
          { extensions?: { code?: string } }[] | { errors?: { extensions?: { code?: string } }[] };
      };
      if (message.type === 'connection_ack') {
        if (!operation) return done('ack');
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: operation } }));
        setTimeout(() => done('subscribed'), 300);
      } else if (message.type === 'error' && Array.isArray(message.payload)) {
        done(message.payload[0]?.extensions?.code ?? 'error');
      } else if (message.type === 'next' && !Array.isArray(message.payload)) {
        done(message.payload?.errors?.[0]?.extensions?.code ?? 'next');
      }
    });
    socket.on('close', (code) => resolveResult(code));
    socket.on('error', reject);
  });
}

const ME = '{ me { id } }';

describe('The family console under /app', () => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    base = t.url.replace('/graphql', '');
  }, 120_000);
  afterAll(() => t.close());

  it('serves the app, and index.html for its client-side routes, with a strict CSP', async () => {
    for (const path of ['/app', '/app/', '/app/legacies/123/facts', '/app/memories']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      // It talks to its own origin only ('self' covers its WebSocket), not to any ws: host.
      expect(csp).toContain("connect-src 'self';");
      expect(csp).not.toMatch(/\bwss?:/);
      // A page that opens it (the landing page, another site) gets no handle on its window.
      expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(await res.text()).toContain('<div id="root"></div>');
    }
  });

  it('keeps its session in an HttpOnly cookie that only its own origin can open, use or end', async () => {
    const user = await t.user('console-session', { name: 'Sam' });
    const own = new URL(t.url).origin;
    const open = (headers: Record<string, string>) =>
      fetch(`${base}/app/session`, { method: 'POST', headers });
    // Another site cannot plant a session, nor can a client that says nothing of where it is.
    const withoutOrigin: Record<string, string>[] = [
      { authorization: `Bearer ${user.token}` },
      { authorization: `Bearer ${user.token}`, origin: FRONTEND },
    ];
    for (const headers of withoutOrigin) {
      const refused = await open(headers);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect(await refused.json()).toMatchObject({
        errors: [{ extensions: { code: 'FORBIDDEN', reason: 'CROSS_ORIGIN' } }],
      });
    }
    const forged = await open({ authorization: 'Bearer not.a.token', origin: own });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('set-cookie')).toBeNull();

    const opened = await open({ authorization: `Bearer ${user.token}`, origin: own });
    expect(opened.status).toBe(200);
    const setCookie = opened.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^keepsake_session=[\w-]+\.[\w-]+\.[\w-]+; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie)![1]);
    expect(maxAge).toBeGreaterThan(3500);
    expect(maxAge).toBeLessThanOrEqual(3600);
    const cookie = setCookie.split(';')[0];

    const me = (headers: Record<string, string>) =>
      fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, ...headers },
        body: JSON.stringify({ query: '{ me { displayName } }' }),
      }).then((r) => r.json() as Promise<{ data?: unknown; errors?: unknown[] }>);
    // The console's own requests carry its origin (POST) or say they are same-origin (GET).
    expect(await me({ origin: own })).toEqual({ data: { me: { displayName: 'Sam' } } });
    expect(await me({ 'sec-fetch-site': 'same-origin' })).toEqual({
      data: { me: { displayName: 'Sam' } },
    });
    // Anything else that carries the cookie is not signed in by it.
    const elsewhere: Record<string, string>[] = [
      { origin: FRONTEND },
      { 'sec-fetch-site': 'same-site' },
      {},
    ];
    for (const headers of elsewhere) {
      expect(await me(headers)).toMatchObject({
        errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
      });
    }
    // The file routes take it too (a story that does not exist: authenticated, then not found).
    const file = (headers: Record<string, string>) =>
      fetch(`${base}/stories/00000000-0000-4000-8000-000000000000/file`, {
        headers: { cookie, ...headers },
      });
    expect((await file({ 'sec-fetch-site': 'same-origin' })).status).toBe(404);
    expect((await file({ 'sec-fetch-site': 'cross-site' })).status).toBe(401);
    // graphql-ws too, from its own origin.
    expect(
      await handshake(t.wsUrl, '', own, cookie, 'subscription { memoryChanged { action } }'),
    ).toBe('subscribed');
    expect(await handshake(t.wsUrl, '', undefined, cookie, '{ me { id } }')).toBe(
      'UNAUTHENTICATED',
    );

    // Signing out is the console's alone too.
    const foreign = await fetch(`${base}/app/session`, {
      method: 'DELETE',
      headers: { origin: FRONTEND, cookie },
    });
    expect(foreign.status).toBe(403);
    const closed = await fetch(`${base}/app/session`, {
      method: 'DELETE',
      headers: { origin: own, cookie },
    });
    expect(closed.status).toBe(200);
    expect(await closed.json()).toEqual({ endSessionUrl: null });
    expect(closed.headers.getSetCookie()[0]).toMatch(/^keepsake_session=; .*Max-Age=0/);
  });

  it('serves the Apollo landing page outside production', async () => {
    const res = await fetch(t.url, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('embeddable-sandbox');
  });

  it('serves its hashed assets for a year and answers 404 for files it does not have', async () => {
    const html = await (await fetch(`${base}/app/`)).text();
    const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)![1];
    const res = await fetch(`${base}${script}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${base}/app/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${base}/app/%2e%2e/package.json`)).status).toBe(404);
  });

  it('publishes its settings without authentication: no OIDC unless configured', async () => {
    const res = await fetch(`${base}/app/config.json`);
    expect(await res.json()).toEqual({ graphqlPath: '/graphql', oidc: null });
  });

  it('sends no CORS headers by default, and refuses graphql-ws from another origin', async () => {
    const preflight = await fetch(t.url, {
      method: 'OPTIONS',
      headers: {
        origin: FRONTEND,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const user = await t.user('console-cors-default');
    expect(await handshake(t.wsUrl, user.token, FRONTEND)).toBe(4403);
    // Its own pages (same origin) and clients that are not browsers (no Origin) connect.
    expect(await handshake(t.wsUrl, user.token, new URL(t.url).origin)).toBe('ack');
    expect(await handshake(t.wsUrl, user.token)).toBe('ack');
  });
});

describe('In production (NODE_ENV=production)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      NODE_ENV: 'production',
    });
  }, 120_000);
  afterAll(() => t.close());

  it('serves no source maps: the build carries none, and no map is served', async () => {
    const base = new URL(t.url).origin;
    const html = await (await fetch(`${base}/app/`)).text();
    const scripts = [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+\.(?:js|css))"/g)].map(
      (m) => m[1],
    );
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      expect(await (await fetch(`${base}${script}`)).text()).not.toMatch(/sourceMappingURL/);
      expect((await fetch(`${base}${script}.map`)).status).toBe(404);
    }
    // Nor one a debugging build (WEB_SOURCEMAP=true) left behind.
    const planted = join(findWebRoot()!, 'assets', 'left-behind.js.map');
    writeFileSync(planted, '{"version":3,"sources":["app.tsx"]}');
    try {
      expect((await fetch(`${base}/app/assets/left-behind.js.map`)).status).toBe(404);
    } finally {
      rmSync(planted);
    }
  });

  it("serves no landing page: no script from Apollo's CDN runs on the console's origin", async () => {
    const res = await fetch(t.url, { headers: { accept: 'text/html' } });
    expect(await res.text()).not.toMatch(/cdn\.apollographql|<script/);
    // The API itself is unchanged.
    const user = await t.user('console-production');
    expect((await t.gql('{ me { id } }', {}, user)).data).toEqual({
      me: { id: expect.any(String) },
    });
  });
});

describe('CORS_ORIGINS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      CORS_ORIGINS: `${FRONTEND}, http://localhost:5173`,
    });
  });
  afterAll(() => t.close());

  it('lets a listed origin call the API with credentials, and no other', async () => {
    const preflight = await fetch(t.url, {
      method: 'OPTIONS',
      headers: {
        origin: FRONTEND,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');

    const user = await t.user('console-cors-listed');
    const res = await fetch(t.url, {
      method: 'POST',
      headers: {
        origin: FRONTEND,
        'content-type': 'application/json',
        authorization: `Bearer ${user.token}`,
      },
      body: JSON.stringify({ query: ME }),
    });
    expect(res.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(await res.json()).toEqual({ data: { me: { id: expect.any(String) } } });

    const other = await fetch(t.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('checks the graphql-ws origin the same way', async () => {
    const user = await t.user('console-cors-ws');
    expect(await handshake(t.wsUrl, user.token, FRONTEND)).toBe('ack');
    // A listed origin uses its own bearer token: the console's session cookie is not for it.
    const cookie = `keepsake_session=${user.token}`;
    expect(await handshake(t.wsUrl, '', FRONTEND, cookie, '{ me { id } }')).toBe('UNAUTHENTICATED');
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { origin: FRONTEND, 'content-type': 'application/json', cookie },
      body: JSON.stringify({ query: ME }),
    });
    expect(await res.json()).toMatchObject({
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });
    expect(await handshake(t.wsUrl, user.token, 'http://localhost:5173')).toBe('ack');
    expect(await handshake(t.wsUrl, user.token, 'https://elsewhere.example')).toBe(4403);
  });
});
