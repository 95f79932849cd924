import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  CONTEXT,
  launchChromium,
  phoneProblems,
  screenshots,
  seriousViolations,
  signInWithToken,
} from './browser.js';

interface StoredProfile {
  consent: boolean;
  preferredName: string | null;
  pronouns: string | null;
  birthday: string | null;
  interests: string[];
  relationships: { legacyName: string; relationship: string }[];
}

/** The profile page: fill it in, give consent, and withdraw it, which empties the profile. */
describe('The profile page in the console', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let rose: TestUser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    base = t.url.replace('/graphql', '');
    rose = await t.user('profile-rose', { email: 'rose@example.com', name: 'Rose' });
    await t.gql('mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }', {}, rose);
    browser = await launchChromium();
    context = await browser.newContext(CONTEXT);
    context.on('weberror', (e) => pageErrors.push(e.error().stack ?? e.error().message));
    page = await context.newPage();
    await signInWithToken(page, base, rose.token);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function stored(): Promise<StoredProfile> {
    const read = await t.gql<{ profile: StoredProfile }>(
      '{ profile { consent preferredName pronouns birthday interests relationships { legacyName relationship } } }',
      {},
      rose,
    );
    return read.data!.profile;
  }

  it('fills in the profile with consent off, as it starts, and says why a field is refused', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Profile' })
      .click();
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    const consent = page.getByRole('switch', { name: /Use my profile/ });
    expect(await consent.isChecked()).toBe(false);
    await page
      .getByText('Keepsake keeps what you write below, and never uses it', { exact: false })
      .waitFor();

    await page.getByLabel('Preferred name').fill('Rosie');
    await page.getByLabel('Pronouns').fill('x'.repeat(41));
    await page.getByLabel('Birthday').fill('1961-05-04');
    await page.getByLabel('Interests').fill('gardening, jazz');
    await page.getByLabel('To Grandpa Joe').fill('granddaughter');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByLabel('Pronouns').getAttribute('aria-invalid')).toBe('true');
    expect((await stored()).preferredName).toBeNull();

    await page.getByLabel('Pronouns').fill('she/her');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Profile saved.').waitFor();
    expect(await stored()).toEqual({
      consent: false,
      preferredName: 'Rosie',
      pronouns: 'she/her',
      birthday: '1961-05-04',
      interests: ['gardening', 'jazz'],
      relationships: [{ legacyName: 'Grandpa Joe', relationship: 'granddaughter' }],
    });
    expect(await seriousViolations(page)).toEqual([]);
  }, 60_000);

  it('gives consent, and withdrawing it (after saying what goes) empties the profile', async () => {
    const consent = page.getByRole('switch', { name: /Use my profile/ });
    await consent.click();
    await page.getByText('Use my profile in my conversations and recall (on)').waitFor();
    expect((await stored()).consent).toBe(true);
    await page.reload();
    await page.getByLabel('Preferred name').waitFor();
    expect(await page.getByLabel('Preferred name').inputValue()).toBe('Rosie');
    await screenshots(context, `${base}/app/profile`, 'profile', 'About you');

    await consent.click();
    const dialog = page.getByRole('alertdialog', { name: /Withdraw consent/ });
    await dialog
      .getByText(
        'preferred name, pronouns, birthday, interests, your relationship to Grandpa Joe',
        { exact: false },
      )
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    // Keeping it changes nothing.
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await stored()).consent).toBe(true);

    await consent.click();
    await dialog.getByRole('button', { name: 'Withdraw and delete' }).click();
    await page.getByText('Consent withdrawn: your profile was deleted.').waitFor();
    await page.getByText('Use my profile in my conversations and recall (off)').waitFor();
    for (const field of ['Preferred name', 'Pronouns', 'Birthday', 'Interests', 'To Grandpa Joe']) {
      expect(await page.getByLabel(field).inputValue()).toBe('');
    }
    expect(await stored()).toEqual({
      consent: false,
      preferredName: null,
      pronouns: null,
      birthday: null,
      interests: [],
      relationships: [],
    });
  }, 60_000);

  it('works at phone width', async () => {
    expect(await phoneProblems(context, `${base}/app/profile`, 'About you')).toEqual([]);
  }, 30_000);

  it('raised no uncaught error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
