import { FakeOidcProvider } from '../support/fake-oidc.js';
import { startTestApp, TestApp } from '../support/test-app.js';

/**
 * The console's session with an OpenID Connect provider whose access tokens carry only the
 * subject: who signed in is read from the ID token (checked, never taken on the browser's
 * word), then from userinfo; signing out can end the provider's session too.
 */
describe("The console's session with an OpenID Connect provider", () => {
  let provider: FakeOidcProvider;
  let t: TestApp;
  let origin: string;

  const CLIENT = 'family-console';
  const AUDIENCE = 'keepsake-api';

  beforeAll(async () => {
    provider = await FakeOidcProvider.start({
      clientId: CLIENT,
      audience: AUDIENCE,
      user: { sub: 'oidc-olga', email: 'olga@example.com', name: 'Olga Petrova' },
      // Its tokens say nothing of the person: only userinfo does.
      profileIn: ['userinfo'],
    });
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CLIENT,
      OIDC_PROVIDER_NAME: 'Family ID',
      JWKS_URL: provider.jwksUrl,
      JWT_ISSUER: provider.issuer,
      JWT_AUDIENCE: AUDIENCE,
    });
    origin = new URL(t.url).origin;
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  const access = (sub: string, claims: Record<string, unknown> = {}) =>
    provider.sign(claims, AUDIENCE, { sub });
  const idToken = (sub: string, claims: Record<string, unknown> = {}, aud = CLIENT) =>
    provider.sign(claims, aud, { sub });
  const open = (token: string, id?: string) =>
    fetch(`${origin}/app/session`, {
      method: 'POST',
      headers: { origin, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(id ? { idToken: id } : {}),
    });
  const me = async (token: string) =>
    (
      await t.gql<{ me: { email: string | null; displayName: string | null } }>(
        '{ me { email displayName } }',
        {},
        token,
      )
    ).data!.me;

  it('publishes the provider’s name for the sign-in page', async () => {
    const settings = (await (await fetch(`${origin}/app/config.json`)).json()) as {
      oidc: { providerName: string };
    };
    expect(settings.oidc).toMatchObject({ issuer: provider.issuer, providerName: 'Family ID' });
  });

  it('reads the name and email from the ID token when the access token has only the subject', async () => {
    const token = await access('oidc-ann');
    const res = await open(
      token,
      await idToken('oidc-ann', {
        email: 'Ann@Example.com',
        email_verified: true,
        name: 'Ann Lee',
      }),
    );
    expect(res.status).toBe(200);
    expect(await me(token)).toEqual({ email: 'ann@example.com', displayName: 'Ann Lee' });
    // Later requests carry the same subject-only access token: the email read at sign-in stays.
    expect((await me(await access('oidc-ann'))).email).toBe('ann@example.com');
  });

  it('asks userinfo, with the access token, for what the ID token leaves out', async () => {
    const token = await access('oidc-olga');
    expect((await open(token, await idToken('oidc-olga'))).status).toBe(200);
    expect(await me(token)).toEqual({ email: 'olga@example.com', displayName: 'Olga Petrova' });
    expect(provider.userinfoRequests).toContain(token);
  });

  it("keeps a name the person chose over the provider's, and clears an email it no longer verifies", async () => {
    const token = await access('oidc-ben');
    await open(
      token,
      await idToken('oidc-ben', { email: 'ben@example.com', email_verified: true, name: 'Ben' }),
    );
    await t.gql('mutation { updateMe(input: { displayName: "Grandpa Ben" }) { id } }', {}, token);
    await open(
      token,
      await idToken('oidc-ben', { email: 'ben@example.com', email_verified: false, name: 'Ben' }),
    );
    expect(await me(token)).toEqual({ email: null, displayName: 'Grandpa Ben' });
  });

  it("refuses an ID token that is not the provider's for this client and person", async () => {
    const token = await access('oidc-cai');
    const claims = { email: 'cai@example.com', email_verified: true, name: 'Cai' };
    for (const bad of [
      await idToken('oidc-cai', claims, 'another-client'),
      await idToken('someone-else', claims),
      await provider.sign(claims, CLIENT, { sub: 'oidc-cai', issuer: 'https://elsewhere.example' }),
      await provider.sign(claims, CLIENT, { sub: 'oidc-cai', expiresIn: '-1h' }),
      'not-a-token',
    ]) {
      const res = await open(token, bad);
      expect(res.status).toBe(401);
      expect(res.headers.get('set-cookie')).toBeNull();
      const body = (await res.json()) as { errors: { extensions: unknown }[] };
      expect(body.errors[0].extensions).toMatchObject({
        code: 'UNAUTHENTICATED',
        reason: 'INVALID_ID_TOKEN',
      });
    }
    expect((await me(token)).displayName).toBeNull();
  });

  it("ends the provider's session too when asked, with the ID token as the hint", async () => {
    const token = await access('oidc-dee');
    const id = await idToken('oidc-dee', { name: 'Dee' });
    const opened = await open(token, id);
    const cookies = opened.headers.getSetCookie().map((c) => c.split(';')[0]);
    expect(cookies).toEqual([`keepsake_session=${token}`, `keepsake_id_token=${id}`]);
    expect(opened.headers.getSetCookie()[1]).toMatch(
      /Path=\/app\/session; .*HttpOnly; SameSite=Strict/,
    );
    const close = (query: string) =>
      fetch(`${origin}/app/session${query}`, {
        method: 'DELETE',
        headers: { origin, cookie: cookies.join('; ') },
      });
    const both = await close('?provider=true');
    expect(both.status).toBe(200);
    const { endSessionUrl } = (await both.json()) as { endSessionUrl: string };
    const url = new URL(endSessionUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${provider.issuer}/logout`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: CLIENT,
      post_logout_redirect_uri: `${origin}/app/signed-out`,
      id_token_hint: id,
    });
    expect(both.headers.getSetCookie().every((c) => /Max-Age=0/.test(c))).toBe(true);
    // Signing out of Keepsake only leaves the provider alone.
    expect(await (await close('')).json()).toEqual({ endSessionUrl: null });
  });
});
