import type { Browser } from 'playwright-core';
import { FakeOidcProvider } from '../support/fake-oidc.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { DESKTOP, launchChromium, seriousViolations } from './browser.js';

/** Sign-in with an OpenID Connect provider: authorization code with PKCE, in the browser. */
describe('The family console with OIDC_ISSUER', () => {
  let t: TestApp;
  let provider: FakeOidcProvider;
  let browser: Browser;

  beforeAll(async () => {
    provider = await FakeOidcProvider.start({
      clientId: 'family-console',
      audience: 'keepsake-api',
      user: { sub: 'oidc-ruth', email: 'ruth@example.com', name: 'Ruth' },
    });
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: 'family-console',
      JWKS_URL: provider.jwksUrl,
      JWT_ISSUER: provider.issuer,
      JWT_AUDIENCE: 'keepsake-api',
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await provider?.close();
  });

  it('signs in through the provider with PKCE and calls the API with its access token', async () => {
    const base = t.url.replace('/graphql', '');
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    await page.goto(`${base}/app/`);
    await page.waitForURL('**/app/sign-in');
    expect(await page.getByText('Development sign-in').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    // Named by the issuer's host, as no OIDC_PROVIDER_NAME is set.
    await page.getByRole('button', { name: 'Sign in with 127.0.0.1' }).click();
    await page.getByRole('heading', { name: 'Your legacies' }).waitFor({ timeout: 15_000 });
    await page.getByText('Signed in as Ruth').waitFor();
    expect(await page.getByText('Development sign-in').count()).toBe(0);

    const [authorization] = provider.authorizations;
    expect(authorization.get('code_challenge_method')).toBe('S256');
    expect(authorization.get('redirect_uri')).toBe(`${base}/app/signed-in`);
    expect(authorization.get('scope')).toBe('openid profile email');
    expect(provider.tokenRequests[0].get('code_verifier')).toMatch(/^[\w-]{43,128}$/);

    // The provider's tokens are nowhere a script of this origin reads them.
    const readable = () =>
      page.evaluate(
        'JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie])',
      ) as Promise<string>;
    expect(await readable()).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    expect(await readable()).not.toMatch(/refresh_token|access_token/);

    // The session survives a reload, and signing out ends it.
    await page.reload();
    await page.getByRole('heading', { name: 'Your legacies' }).waitFor();
    expect(await readable()).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out of Keepsake only' }).click();
    await page.waitForURL('**/app/sign-in');
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
