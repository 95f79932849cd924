import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (test/support/with-chromium.sh installs it); no browser is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Desktop size, and a fixed locale and time zone so pages (and screenshots) read the same anywhere. */
export const CONTEXT = { viewport: DESKTOP, locale: 'en-GB', timezoneId: 'Europe/London' };

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: run \`bash test/support/with-chromium.sh\` (apt-get install chromium).`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Serious and critical axe violations on the page as it is now, as readable lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21aa'])
    .analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

const SHOTS = resolve('docs/screenshots');

/** Writes docs/screenshots/<name>-desktop.png and -phone.png (shown in docs/family.md). */
export async function screenshots(
  context: BrowserContext,
  url: string,
  name: string,
  ready: string,
) {
  mkdirSync(SHOTS, { recursive: true });
  for (const [suffix, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    await page.goto(url);
    await page.getByText(ready, { exact: false }).first().waitFor();
    // Let the live queries settle so the image shows the page, not its loading state.
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(SHOTS, `${name}-${suffix}.png`), fullPage: true });
    await page.close();
  }
}

/** Signs in on the development sign-in page with a token, as a person pastes it. */
export async function signInWithToken(page: Page, base: string, token: string) {
  await page.goto(`${base}/app/sign-in`);
  await page.getByRole('heading', { name: 'Development sign-in' }).waitFor();
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in with this token' }).click();
  await page.getByRole('heading', { name: 'Your legacies' }).waitFor();
}

/**
 * The page at phone width: no serious or critical axe violation, and nothing wider than the
 * screen (no sideways scrolling). `ready` is a text the page shows once loaded.
 */
export async function phoneProblems(
  context: BrowserContext,
  url: string,
  ready: string,
): Promise<string[]> {
  const page = await context.newPage();
  await page.setViewportSize(PHONE);
  await page.goto(url);
  await page.getByText(ready, { exact: false }).first().waitFor();
  await page.waitForLoadState('networkidle');
  const problems = await seriousViolations(page);
  const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
  if (width > PHONE.width) problems.push(`${url} is ${width}px wide at phone width`);
  await page.close();
  return problems;
}

/**
 * Writes docs/screenshots/<name>-desktop.png and -phone.png of the page as it is now (a state
 * reached by acting on it, which a fresh load would not show), then restores its size.
 */
export async function screenshotsOfPage(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  const size = page.viewportSize() ?? DESKTOP;
  for (const [suffix, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    // Let charts and wrapped layouts settle at the new width.
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, `${name}-${suffix}.png`), fullPage: true });
  }
  await page.setViewportSize(size);
}

/**
 * Polls an expression in the page from the test until it is truthy: the console's CSP forbids
 * the string evaluation that page.waitForFunction does inside the page.
 */
export async function until(page: Page, expression: string, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > end) throw new Error(`Still false after ${timeoutMs} ms: ${expression}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
