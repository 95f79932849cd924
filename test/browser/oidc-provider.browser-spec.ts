import type { Browser, Page, Response } from 'playwright-core';
import { decodeJwt } from 'jose';
import { startRealOidcProvider, type RealOidcProvider } from '../support/oidc-provider.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { CONTEXT, launchChromium, screenshotsOfPage, seriousViolations } from './browser.js';

/**
 * Signing in and out of the console with a real OpenID Connect provider, npm's oidc-provider,
 * whose access tokens carry the subject only (names and emails are in its ID tokens), in
 * Chromium: the sign-in page names the provider, the console knows who signed in, renews with
 * the refresh token and never in a hidden iframe, and signing out of the provider too makes the
 * next person at the computer sign in with their own password.
 */
describe('Signing in and out with a real OpenID Connect provider', () => {
  let provider: RealOidcProvider;
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    provider = await startRealOidcProvider({
      clientId: 'family-console',
      accounts: {
        olga: { email: 'olga@example.com', email_verified: true, name: 'Olga Petrova' },
        // A provider that knows no name for this person.
        mia: { email: 'mia@example.com', email_verified: true },
      },
      refreshTokens: true,
      // oidc-client-ts warns a minute ahead: the console renews a few seconds after sign-in.
      accessTokenTtlSeconds: 66,
    });
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: 'family-console',
      OIDC_PROVIDER_NAME: 'Family ID',
      JWKS_URL: provider.jwksUrl,
      JWT_ISSUER: provider.issuer,
      JWT_AUDIENCE: provider.audience,
    });
    base = t.url.replace('/graphql', '');
    provider.serve(base);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await provider?.close();
  });

  /** A browser as a family's shared computer: its problems (errors, frames) are collected. */
  async function computer() {
    const context = await browser.newContext(CONTEXT);
    // The provider's development pages ask for a web font; the tests run offline.
    await context.route(/fonts\.googleapis\.com/, (route) => route.abort());
    const problems: string[] = [];
    const tokens: Record<string, unknown>[] = [];
    const watch = (page: Page) => {
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error' && new URL(page.url()).origin === base) problems.push(m.text());
      });
      page.on('frameattached', () => problems.push(`a frame was attached to ${page.url()}`));
      page.on('response', (r: Response) => {
        if (r.url() === `${provider.issuer}/token` && r.ok()) {
          void r.json().then((body: Record<string, unknown>) => tokens.push(body));
        }
      });
    };
    context.on('page', watch);
    return { context, problems, tokens };
  }

  async function signInAt(page: Page, login: string) {
    await page.getByRole('button', { name: 'Sign in with Family ID' }).click();
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  it('signs in with the provider named on the page, knows who it is, renews without an iframe, and signing out of both makes the next person sign in', async () => {
    const { context, problems, tokens } = await computer();
    const page = await context.newPage();
    await page.goto(`${base}/app/`);
    await page.getByRole('heading', { name: 'Sign in to Keepsake' }).waitFor();
    await page.getByText('Your family signs in to Keepsake with Family ID').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotsOfPage(page, 'sign-in-provider');

    await signInAt(page, 'olga');
    await page.getByRole('heading', { name: 'Your legacies' }).waitFor({ timeout: 15_000 });
    // Who it is came from the ID token: the access token says nothing but the subject.
    await page.getByText('Signed in as Olga Petrova (olga@example.com)').waitFor();
    const [first] = tokens;
    const accessClaims = decodeJwt(first.access_token as string);
    expect(accessClaims).not.toHaveProperty('email');
    expect(accessClaims).not.toHaveProperty('name');
    expect(decodeJwt(first.id_token as string)).toMatchObject({ name: 'Olga Petrova' });

    // Before the access token expires, the console renews it with the refresh token: no
    // iframe, no error, and the API goes on accepting the page's requests.
    const deadline = Date.now() + 20_000;
    while (!provider.tokenRequests.some((f) => f.get('grant_type') === 'refresh_token')) {
      if (Date.now() > deadline) throw new Error('the console did not renew its sign-in');
      await page.waitForTimeout(250);
    }
    await page.getByRole('link', { name: 'Memories' }).click();
    await page.getByRole('heading', { name: 'Your memories' }).waitFor();
    expect(page.frames()).toHaveLength(1);

    // Sign out: of the provider too, as the console recommends on a shared computer.
    await page.getByRole('link', { name: 'Legacies' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign out' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotsOfPage(page, 'sign-out');
    await page.getByRole('button', { name: 'Sign out of Keepsake and Family ID' }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await page.getByText('the next person at this computer has to sign in').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotsOfPage(page, 'signed-out');

    // The next person: the provider asks for a password again.
    await page.getByRole('link', { name: 'Sign in again' }).click();
    await page.getByRole('button', { name: 'Sign in with Family ID' }).click();
    await page.getByPlaceholder('Enter any login').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('asks a person the provider gave no name for what to call them; signing out of Keepsake only leaves the provider signed in', async () => {
    const { context, problems } = await computer();
    const page = await context.newPage();
    await page.goto(`${base}/app/sign-in`);
    await signInAt(page, 'mia');
    await page.getByRole('heading', { name: 'What should your family call you?' }).waitFor({
      timeout: 15_000,
    });
    // Never an id in its place.
    expect(await page.locator('main').innerText()).not.toMatch(/Signed in as mia\b|[0-9a-f]{8}-/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotsOfPage(page, 'your-name');
    await page.getByLabel('Your name').fill('Mia');
    await page.getByRole('button', { name: 'Save your name' }).click();
    await page.getByText('Signed in as Mia (mia@example.com)').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out of Keepsake only' }).click();
    await page.getByRole('heading', { name: 'Sign in to Keepsake' }).waitFor();
    // The provider's session is still there: signing in again asks for no password.
    await page.getByRole('button', { name: 'Sign in with Family ID' }).click();
    await page
      .getByRole('button', { name: 'Continue' })
      .or(page.getByRole('heading', { name: 'Your legacies' }))
      .first()
      .waitFor();
    expect(await page.getByPlaceholder('Enter any login').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
