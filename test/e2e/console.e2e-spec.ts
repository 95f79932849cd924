import WebSocket from 'ws';
import { startTestApp, TestApp } from '../support/test-app.js';

const FRONTEND = 'https://family.example';

/** Opens graphql-ws with the given Origin; resolves with the ack, or the close code. */
function handshake(wsUrl: string, token: string, origin?: string): Promise<'ack' | number> {
  return new Promise((resolveResult, reject) => {
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws', {
      headers: origin ? { origin } : {},
    });
    socket.on('open', () =>
      socket.send(
        JSON.stringify({
          type: 'connection_init',
          payload: { authorization: `Bearer ${token}` },
        }),
      ),
    );
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string };
      if (message.type === 'connection_ack') {
        socket.close();
        resolveResult('ack');
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
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toContain('<div id="root"></div>');
    }
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
    expect(await handshake(t.wsUrl, user.token, 'http://localhost:5173')).toBe('ack');
    expect(await handshake(t.wsUrl, user.token, 'https://elsewhere.example')).toBe(4403);
  });
});
