import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { jsonLines, unzipAll } from '../support/archives.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  CONTEXT,
  launchChromium,
  phoneProblems,
  seriousViolations,
  signInWithToken,
} from './browser.js';

/**
 * Legacy archives in the console: Olivia asks for her archive of a legacy on its page, sees its
 * progress, saves the ZIP (index.html, keepsake.json, the story's original), then imports that
 * ZIP from the legacies page, sees the upload and the import go, and opens the new legacy.
 */
describe('Legacy archives in the console', () => {
  let t: TestApp;
  let jobs: JobsService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let olivia: TestUser;
  let legacyId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    jobs = t.app.get(JobsService);
    base = t.url.replace('/graphql', '');
    olivia = await t.user('archives-olivia', {
      email: 'olivia@archives-browser.example.com',
      name: 'Olivia',
    });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Rose", description: "She grew hydrangeas by the lighthouse." }) { id } }',
      {},
      olivia,
    );
    legacyId = created.data!.createLegacy.id;
    for (const [query, variables] of [
      [
        'mutation($l: ID!) { addFact(input: { legacyId: $l, content: "Rose kept bees on the cliff.", category: HOBBY }) { id } }',
        { l: legacyId },
      ],
      [
        'mutation($l: ID!) { addStory(input: { legacyId: $l, title: "The bees", content: "Every June she took the honey down to the harbour." }) { id } }',
        { l: legacyId },
      ],
      [
        `mutation($l: ID!) { importConversation(input: { legacyId: $l, title: "Summers", messages: [
           { role: USER, content: "She sold honey at the harbour every June.", occurredAt: "2025-06-02T10:00:00Z" }] }) { importedCount } }`,
        { l: legacyId },
      ],
    ] as const) {
      const res = await t.gql(query, variables, olivia);
      expect(res.errors).toBeUndefined();
    }
    await jobs.drain();
    browser = await launchChromium();
    context = await browser.newContext({ ...CONTEXT, acceptDownloads: true });
    context.on('weberror', (e) => pageErrors.push(e.error().stack ?? e.error().message));
    page = await context.newPage();
    await signInWithToken(page, base, olivia.token);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  let zipPath: string;

  it('downloads an archive of the legacy, with its progress', async () => {
    await page.goto(`${base}/app/legacies/${legacyId}`);
    await page.getByRole('heading', { name: 'Archive' }).waitFor();
    await page.getByRole('button', { name: 'Download an archive' }).click();
    // The job waits for this test to run it: the page shows it queued, then live to the end.
    await page.getByLabel('Writing the archive').waitFor();
    await page.getByText('Waiting to start…').waitFor();
    expect(await page.getByRole('button', { name: 'Download an archive' }).isDisabled()).toBe(true);
    await jobs.drain();
    await page.getByText('Your archive is ready').waitFor({ timeout: 20_000 });
    expect(await page.getByText(/1 facts, 1 stories, 1 conversations \(1 turns\)/).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /^Save Rose .*\.zip$/ }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^Rose \d{4}-\d{2}-\d{2}\.zip$/);
    zipPath = await download.path();
    const files = await unzipAll(readFileSync(zipPath));
    expect(files.get('index.html')!.toString('utf8')).toContain(
      'She grew hydrangeas by the lighthouse.',
    );
    const stories = jsonLines<{ file: string }>(files, 'data/stories.jsonl');
    expect(files.get(stories[0].file)!.toString('utf8')).toBe(
      'Every June she took the honey down to the harbour.',
    );
    expect(JSON.parse(files.get('keepsake.json')!.toString('utf8'))).toMatchObject({
      format: 'keepsake.legacy-archive',
      version: 1,
    });
  });

  it('imports the archive as a new legacy, with its progress', async () => {
    await page.goto(`${base}/app/`);
    await page.getByRole('heading', { name: 'Import an archive' }).waitFor();
    await page.getByLabel('Archive (ZIP)').setInputFiles(zipPath);
    await page.getByRole('button', { name: 'Import an archive' }).click();
    await page.getByLabel('Importing').waitFor({ timeout: 20_000 });
    await jobs.drain();
    await page.getByText(/Imported: 1 facts, 1 stories/).waitFor({ timeout: 20_000 });
    expect(await seriousViolations(page)).toEqual([]);
    // The new legacy is listed, and opens.
    expect(await page.getByRole('link', { name: 'Rose' }).count()).toBe(2);
    await page.getByRole('link', { name: 'Open the new legacy' }).click();
    await page.getByRole('heading', { name: 'Rose' }).waitFor();
    expect(page.url()).not.toContain(legacyId);
    await page.getByText('You are an owner of this legacy.').waitFor();
  });

  it('says why an archive is refused', async () => {
    await page.goto(`${base}/app/`);
    await page.getByLabel('Archive (ZIP)').setInputFiles({
      name: 'notes.zip',
      mimeType: 'application/zip',
      buffer: Buffer.from('not a zip at all'),
    });
    await page.getByRole('button', { name: 'Import an archive' }).click();
    await page.getByRole('alert').filter({ hasText: 'not a ZIP archive' }).waitFor();
  });

  it('reads well at phone width', async () => {
    expect(
      await phoneProblems(context, `${base}/app/legacies/${legacyId}`, 'Download an archive'),
    ).toEqual([]);
    expect(await phoneProblems(context, `${base}/app/`, 'Import an archive')).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
