import type { Browser, BrowserContext, Page } from 'playwright-core';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  CONTEXT,
  DESKTOP,
  launchChromium,
  PHONE,
  phoneProblems,
  screenshots,
  screenshotsOfPage,
  seriousViolations,
  signInWithToken,
  until,
} from './browser.js';

/** Coloured pixels on a canvas: the chart was drawn. (Runs in the page, as a string.) */
const DRAWN = `(() => {
  const canvas = document.querySelector('[data-testid=chart]');
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let n = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
  return n;
})()`;

/**
 * Looking back: a member's weekly, monthly and yearly summaries on a timeline, a backfill of a
 * past range with its progress, two years compared with a plot per month, and a deletion.
 */
describe('Looking back in the console', () => {
  let t: TestApp;
  let jobs: JobsService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let ada: TestUser;
  let legacyId: string;
  const pageErrors: string[] = [];
  const scripts: string[] = [];

  async function importConversation(title: string, day: string, lines: string[]) {
    const imported = await t.gql(
      `mutation ($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      {
        input: {
          legacyId,
          title,
          messages: lines.map((content, i) => ({
            role: i % 2 ? 'ASSISTANT' : 'USER',
            content,
            occurredAt: `${day}T10:0${i}:00Z`,
          })),
        },
      },
      ada,
    );
    expect(imported.errors).toBeUndefined();
  }

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    jobs = t.app.get(JobsService);
    base = t.url.replace('/graphql', '');
    ada = await t.user('looking-back-ada', { email: 'ada@example.com', name: 'Ada' });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandma Rose" }) { id } }',
      {},
      ada,
    );
    legacyId = created.data!.createLegacy.id;
    await importConversation('Roses', '2025-03-04', [
      'Grandma grew climbing roses along the garden wall.',
      'What colour were the roses?',
      'Deep red roses, and she pruned them every March in the garden.',
    ]);
    await importConversation('The boat', '2024-03-05', [
      'Grandma rowed the fishing boat across the harbour.',
      'Where did she fish?',
      'Off the harbour wall, mostly for mackerel from the boat.',
    ]);

    browser = await launchChromium();
    context = await browser.newContext(CONTEXT);
    context.on('weberror', (e) => pageErrors.push(e.error().stack ?? e.error().message));
    page = await context.newPage();
    page.on('request', (r) => {
      if (r.resourceType() === 'script') scripts.push(r.url());
    });
    await signInWithToken(page, base, ada.token);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const entry = (name: string) =>
    page
      .getByRole('list', { name: 'Summaries' })
      .getByRole('listitem')
      .filter({ has: page.getByRole('heading', { name, exact: true }) });

  async function backfill(from: string, to: string) {
    await page.getByLabel('From').fill(from);
    await page.getByLabel('To', { exact: true }).fill(to);
    await page.getByRole('button', { name: 'Summarize the range' }).click();
    await page.getByText(/^Working: 0 of \d+ periods/).waitFor();
    await jobs.drain();
    await page.getByText(/^Done: (\d+) of \1 periods/).waitFor({ timeout: 15_000 });
  }

  it('backfills a past range with its progress: the week’s summary appears on the timeline', async () => {
    await page.goto(`${base}/app/legacies/${legacyId}`);
    await page.getByRole('link', { name: 'Looking back' }).click();
    await page.getByRole('heading', { name: 'Looking back with Grandma Rose' }).waitFor();
    await page.getByText('No summaries yet', { exact: false }).waitFor();
    // Nothing plots yet: the charting library is not loaded.
    expect(scripts.filter((url) => /\/charts-[^/]*\.js$/.test(url))).toEqual([]);

    await backfill('2025-03-03', '2025-03-09');
    const week = entry('Week of 3 Mar 2025');
    await week.waitFor({ timeout: 10_000 });
    await week.getByText('1 conversation, 3 messages', { exact: false }).waitFor();
    await week.getByText('What came up', { exact: true }).waitFor();
    // How it was made is there for whoever opens it.
    await week.getByText('How it was made').click();
    await week.getByText('Built from').waitFor();
    await entry('March 2025').getByText('How it was made').click();
    await entry('March 2025').getByText('Week of 3 Mar 2025', { exact: false }).waitFor();
    await entry('2025').waitFor();
    expect(
      (await week.getByRole('definition').allTextContents()).join(' ').toLowerCase(),
    ).toContain('garden');
    expect(await seriousViolations(page)).toEqual([]);
  }, 60_000);

  it('compares two years side by side, with a plot of the month summaries', async () => {
    await backfill('2024-03-04', '2024-03-10');
    await entry('Week of 4 Mar 2024').waitFor({ timeout: 10_000 });

    await page.getByLabel('Year', { exact: true }).fill('2025');
    await page.getByLabel('With').fill('2024');
    await page.getByRole('button', { name: 'Compare', exact: true }).click();
    const current = page.getByRole('group', { name: '2025' });
    await current.getByText('Conversations').waitFor();
    await page.getByRole('group', { name: '2024' }).waitFor();
    const chart = page.getByRole('img', { name: 'Messages per month in 2025 and 2024' });
    await chart.waitFor();
    await until(page, `${DRAWN} > 1000`);
    expect(scripts.filter((url) => /\/charts-[^/]*\.js$/.test(url))).toHaveLength(1);

    await page.getByText('The numbers and themes per month').click();
    const march = page.getByRole('row', { name: /^Mar/ });
    expect(await march.getByRole('cell').allTextContents()).toEqual([
      expect.stringMatching(/^1 conversation, 3 messages/),
      expect.stringMatching(/^1 conversation, 3 messages/),
    ]);
    expect(await seriousViolations(page)).toEqual([]);
    // At phone width the comparison and its plot fit the screen too.
    await page.setViewportSize(PHONE);
    // The chart follows the new width (Chart.js resizes on its ResizeObserver's next turn).
    await until(page, `document.documentElement.scrollWidth <= ${PHONE.width}`);
    await until(page, `${DRAWN} > 1000`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(DESKTOP);
    await screenshotsOfPage(page, 'compare-years');
    await screenshots(
      context,
      `${base}/app/legacies/${legacyId}/looking-back`,
      'looking-back',
      'Week of 3 Mar 2025',
    );
  }, 60_000);

  it('deletes a summary after saying what goes', async () => {
    const week = entry('Week of 4 Mar 2024');
    await week.getByRole('button', { name: /^Delete/ }).click();
    await week
      .getByRole('alertdialog')
      .getByText('It is not made again unless you ask for it.', { exact: false })
      .waitFor();
    await week.getByRole('button', { name: 'Delete the summary', exact: true }).click();
    await page.getByText('Week of 4 Mar 2024 deleted.').waitFor();
    await week.waitFor({ state: 'detached' });
    const left = await t.gql<{ periodSummaries: { nodes: { start: string }[] } }>(
      'query ($l: ID!) { periodSummaries(legacyId: $l, period: WEEK) { nodes { start } } }',
      { l: legacyId },
      ada,
    );
    expect(left.data!.periodSummaries.nodes.map((n) => n.start)).toEqual(['2025-03-03']);
  }, 30_000);

  it('shows more than a page of summaries with “Show more”', async () => {
    // A long conversation with turns in each of 45 weeks of 2023: 57 weeks, months and the year.
    const imported = await t.gql(
      `mutation ($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      {
        input: {
          legacyId,
          title: 'Walks',
          messages: Array.from({ length: 45 }, (_, week) => {
            const monday = new Date(Date.UTC(2023, 0, 2 + 7 * week, 9)).getTime();
            return [
              'Grandma walked the dog along the harbour wall.',
              'To the lighthouse and back, every morning.',
            ].map((content, i) => ({
              role: i ? 'ASSISTANT' : 'USER',
              content,
              occurredAt: new Date(monday + i * 60_000).toISOString(),
            }));
          }).flat(),
        },
      },
      ada,
    );
    expect(imported.errors).toBeUndefined();
    await page.goto(`${base}/app/legacies/${legacyId}/looking-back`);
    await backfill('2023-01-01', '2023-12-31');
    const items = page.getByRole('list', { name: 'Summaries' }).getByRole('listitem');
    await entry('Week of 6 Nov 2023').waitFor({ timeout: 10_000 });
    expect(await items.count()).toBe(50);
    // Newest first: the first weeks of 2023 are on the next page.
    expect(await entry('Week of 2 Jan 2023').count()).toBe(0);
    const more = page.getByRole('button', { name: 'Show more summaries' });
    await more.click();
    await entry('Week of 2 Jan 2023').waitFor();
    await entry('2023').waitFor();
    expect(await items.count()).toBe(62);
    await more.waitFor({ state: 'detached' });
    expect(await seriousViolations(page)).toEqual([]);
  }, 120_000);

  it('works at phone width', async () => {
    expect(
      await phoneProblems(context, `${base}/app/legacies/${legacyId}/looking-back`, 'Timeline'),
    ).toEqual([]);
  }, 30_000);

  it('raised no uncaught error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
