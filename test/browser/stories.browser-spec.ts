import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import PDFDocument from 'pdfkit';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  CONTEXT,
  launchChromium,
  phoneProblems,
  screenshots,
  seriousViolations,
  signInWithToken,
} from './browser.js';

function makePdf(pages: string[], options: PDFKit.PDFDocumentOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      compress: true,
      info: { Title: 'Letters from Rose' },
      ...options,
    });
    const parts: Buffer[] = [];
    doc.on('data', (part: Buffer) => parts.push(part));
    doc.on('end', () => resolve(Buffer.concat(parts)));
    doc.on('error', reject);
    pages.forEach((text, i) => {
      if (i > 0) doc.addPage();
      doc.fontSize(12).text(text);
    });
    doc.end();
  });
}

/** A Word document as the server tests make one: a heading and paragraphs. */
async function makeDocx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'The eulogy', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('Joe mended every bicycle on Quay Street for nothing but a cup of tea.'),
          new Paragraph('He whistled the same three bars of a sea shanty while he worked.'),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

const PAGE_SEVEN =
  'On the seventh page Rose wrote that the blue hydrangeas by the lighthouse bloomed late.';
const PAGES = Array.from({ length: 10 }, (_, i) =>
  i === 6
    ? PAGE_SEVEN
    : `Page ${i + 1}: an ordinary day of letters about weather, bread and the neighbours' cat number ${i}.`,
);

/**
 * Stories and documents in the console: Max uploads a PDF and writes a story, Olivia (the
 * legacy's owner) sees what he shares, live, and moderates it; each in a browser context.
 */
describe('Stories and documents in the console', () => {
  let t: TestApp;
  let jobs: JobsService;
  let browser: Browser;
  let base: string;
  let olivia: TestUser;
  let max: TestUser;
  let oliviaContext: BrowserContext;
  let maxContext: BrowserContext;
  let oliviaPage: Page;
  let maxPage: Page;
  let legacyId: string;
  let joeId: string;
  let pdf: Buffer;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    jobs = t.app.get(JobsService);
    base = t.url.replace('/graphql', '');
    olivia = await t.user('stories-olivia', { email: 'olivia@example.com', name: 'Olivia' });
    max = await t.user('stories-max', { email: 'max@example.com', name: 'Max' });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Rose" }) { id } }',
      {},
      olivia,
    );
    legacyId = created.data!.createLegacy.id;
    await joinLegacy(t, olivia, legacyId, max);
    // Max's own legacy, for uploads of every kind and more stories than a page holds.
    const joe = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Joe" }) { id } }',
      {},
      max,
    );
    joeId = joe.data!.createLegacy.id;
    pdf = await makePdf(PAGES);

    browser = await launchChromium();
    oliviaContext = await browser.newContext(CONTEXT);
    maxContext = await browser.newContext({ ...CONTEXT, acceptDownloads: true });
    for (const context of [oliviaContext, maxContext]) {
      context.on('weberror', (e) => pageErrors.push(e.error().stack ?? e.error().message));
    }
    oliviaPage = await oliviaContext.newPage();
    maxPage = await maxContext.newPage();
    await signInWithToken(oliviaPage, base, olivia.token);
    await signInWithToken(maxPage, base, max.token);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const listed = (page: Page, title: string) =>
    page
      .getByRole('list', { name: 'Stories' })
      .getByRole('listitem')
      .filter({ has: page.getByRole('link', { name: title, exact: true }) });

  it('uploads a PDF with its progress, then its indexing, and refuses a file it cannot read', async () => {
    await maxPage.goto(`${base}/app/legacies/${legacyId}`);
    await maxPage.getByRole('link', { name: 'Stories' }).click();
    await maxPage.getByRole('heading', { name: 'Stories and documents about Rose' }).waitFor();
    await maxPage.getByText('No stories match.').waitFor();

    await maxPage.getByLabel('File to upload').setInputFiles({
      name: 'letters.pdf',
      mimeType: 'application/pdf',
      buffer: pdf,
    });
    await maxPage.getByRole('button', { name: 'Upload', exact: true }).click();
    await maxPage.getByText('Uploaded.').waitFor();
    expect(await maxPage.getByRole('progressbar', { name: 'Upload' }).getAttribute('value')).toBe(
      '100',
    );
    await maxPage.getByText('Indexing “Letters from Rose”', { exact: false }).waitFor();
    await listed(maxPage, 'Letters from Rose').getByText('Processing').waitFor();
    // The job indexes it; the page follows without a reload.
    await jobs.drain();
    await maxPage
      .getByText(/“Letters from Rose” is ready: \d+ passages, findable in recall\./)
      .waitFor({ timeout: 15_000 });
    const indexing = maxPage.getByRole('progressbar', { name: 'Indexing' });
    expect(await indexing.getAttribute('value')).toBe(await indexing.getAttribute('max'));
    // The list's row follows its own event, which may come a moment after the notice.
    await listed(maxPage, 'Letters from Rose')
      .getByText('Processing')
      .waitFor({ state: 'detached', timeout: 10_000 });
    expect(await seriousViolations(maxPage)).toEqual([]);

    // A password-protected PDF is refused with the API's reason, and nothing is stored.
    await maxPage.getByLabel('File to upload').setInputFiles({
      name: 'locked.pdf',
      mimeType: 'application/pdf',
      buffer: await makePdf(PAGES, { userPassword: 'secret' }),
    });
    await maxPage.getByRole('button', { name: 'Upload', exact: true }).click();
    await maxPage
      .getByRole('alert')
      .filter({ hasText: /password/i })
      .waitFor();
    expect(await maxPage.getByRole('list', { name: 'Stories' }).getByRole('listitem').count()).toBe(
      1,
    );
  }, 90_000);

  it('finds the PDF through recall and opens it at its page, read page by page', async () => {
    await maxPage.getByRole('link', { name: 'Recall' }).click();
    await maxPage
      .getByLabel('What do you remember about…')
      .fill('blue hydrangeas by the lighthouse');
    await maxPage.getByRole('button', { name: 'Recall' }).click();
    await maxPage.getByRole('link', { name: 'Open “Letters from Rose” at page 7' }).first().click();
    await maxPage.getByRole('heading', { name: 'Letters from Rose', level: 1 }).waitFor();
    await maxPage.getByRole('heading', { name: 'Page 7 of 10' }).waitFor();
    const marked = (await maxPage.locator('mark').textContent())!.replace(/\s+/g, ' ');
    expect(marked).toContain('blue hydrangeas');
    await maxPage.getByRole('button', { name: 'Next page' }).click();
    await maxPage.getByRole('heading', { name: 'Page 8 of 10' }).waitFor();
    await maxPage.getByText('Page 8: an ordinary day', { exact: false }).waitFor();
    await maxPage.getByLabel('Go to page').fill('2');
    await maxPage.getByRole('button', { name: 'Go', exact: true }).click();
    await maxPage.getByRole('heading', { name: 'Page 2 of 10' }).waitFor();
    expect(await seriousViolations(maxPage)).toEqual([]);

    const [download] = await Promise.all([
      maxPage.waitForEvent('download'),
      maxPage.getByRole('button', { name: 'Download the original' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('letters.pdf');
    expect(readFileSync(await download.path()).equals(pdf)).toBe(true);
  }, 60_000);

  it('shares the PDF with the family live, and takes it back', async () => {
    await oliviaPage.goto(`${base}/app/legacies/${legacyId}/stories`);
    await oliviaPage.getByText('No stories match.').waitFor();
    await maxPage.goto(`${base}/app/legacies/${legacyId}/stories`);
    await listed(maxPage, 'Letters from Rose')
      .getByRole('button', { name: /^Share/ })
      .click();
    await maxPage.getByText('“Letters from Rose” is shared.').waitFor();
    const seen = listed(oliviaPage, 'Letters from Rose');
    await seen.getByText('by Max', { exact: false }).waitFor({ timeout: 10_000 });
    await listed(maxPage, 'Letters from Rose')
      .getByRole('button', { name: /^Take back/ })
      .click();
    await seen.waitFor({ state: 'detached', timeout: 10_000 });
    await listed(maxPage, 'Letters from Rose')
      .getByRole('button', { name: /^Share/ })
      .click();
    await seen.waitFor({ timeout: 10_000 });
    expect(await seriousViolations(oliviaPage)).toEqual([]);
  }, 60_000);

  it('writes a story in Markdown, edits it, and deletes it after saying what goes', async () => {
    await maxPage.getByLabel('Title', { exact: true }).fill('Soda bread');
    await maxPage
      .getByLabel('The story (text or Markdown)')
      .fill('# Soda bread\n\nRose baked **soda bread** every Friday in the range.');
    await maxPage.getByRole('button', { name: 'Save story' }).click();
    await maxPage.getByText('“Soda bread” saved: it is being indexed.').waitFor();
    await jobs.drain();
    await listed(maxPage, 'Soda bread').getByRole('link', { name: 'Soda bread' }).click();
    await maxPage.getByText('Rose baked **soda bread** every Friday', { exact: false }).waitFor();
    await maxPage.getByRole('button', { name: 'Edit' }).click();
    await maxPage.getByLabel('Title', { exact: true }).fill('Rose’s soda bread');
    await maxPage
      .getByLabel('The story', { exact: true })
      .fill('Rose baked soda bread on Fridays.');
    await maxPage.getByRole('button', { name: 'Save', exact: true }).click();
    await maxPage.getByText('Story saved.').waitFor();
    await maxPage.getByRole('heading', { name: 'Rose’s soda bread', level: 1 }).waitFor();
    await maxPage.getByText('Rose baked soda bread on Fridays.').waitFor();

    await maxPage.getByRole('button', { name: /^Delete/ }).click();
    const confirm = maxPage.getByRole('alertdialog');
    // What goes, in the API's own words: the ones forgetRecallItem gives too.
    const said = await t.gql<{ story: { wouldDelete: string } }>(
      'query ($id: ID!) { story(id: $id) { wouldDelete } }',
      { id: await storyId('Rose’s soda bread') },
      max,
    );
    const wouldDelete = said.data!.story.wouldDelete;
    expect(wouldDelete).toBe(
      'The story “Rose’s soda bread” (1 page), its file and every passage indexed from it, and the facts known only from it.',
    );
    await confirm
      .getByText(`Deleting removes, at once and for good: ${wouldDelete}`, { exact: true })
      .waitFor();
    expect(await seriousViolations(maxPage)).toEqual([]);
    await confirm.getByRole('button', { name: 'Delete for good' }).click();
    await maxPage.getByRole('heading', { name: /^Stories and documents/ }).waitFor();
    await listed(maxPage, 'Rose’s soda bread').waitFor({ state: 'detached' });
  }, 60_000);

  it('lets the owner moderate a shared story: make it private, then delete it', async () => {
    await oliviaPage.goto(`${base}/app/legacies/${legacyId}/stories`);
    const seen = listed(oliviaPage, 'Letters from Rose');
    await seen.getByRole('button', { name: /^Make private/ }).click();
    await seen.waitFor({ state: 'detached', timeout: 10_000 });
    // Still Max's, private.
    await listed(maxPage, 'Letters from Rose').getByText('Only you').waitFor({ timeout: 10_000 });
    await screenshots(maxContext, `${base}/app/legacies/${legacyId}/stories`, 'stories', 'Letters');
    await screenshots(
      maxContext,
      `${base}/app/legacies/${legacyId}/stories/${await storyId('Letters from Rose')}?page=7`,
      'story',
      'Page 7 of 10',
    );

    expect(
      await phoneProblems(
        maxContext,
        `${base}/app/legacies/${legacyId}/stories/${await storyId('Letters from Rose')}?page=7`,
        'Page 7 of 10',
      ),
    ).toEqual([]);

    await listed(maxPage, 'Letters from Rose')
      .getByRole('button', { name: /^Share/ })
      .click();
    await seen.waitFor({ timeout: 10_000 });
    await seen.getByRole('button', { name: /^Delete/ }).click();
    await seen
      .getByRole('alertdialog')
      .getByText('(10 pages), its file', { exact: false })
      .waitFor();
    await seen.getByRole('button', { name: 'Delete for good' }).click();
    await seen.waitFor({ state: 'detached', timeout: 10_000 });
    await listed(maxPage, 'Letters from Rose').waitFor({ state: 'detached', timeout: 10_000 });
    const left = await t.gql<{ stories: { nodes: unknown[] } }>(
      'query ($l: ID!) { stories(legacyId: $l) { nodes { id } } }',
      { l: legacyId },
      max,
    );
    expect(left.data!.stories.nodes).toEqual([]);
  }, 90_000);

  async function storyId(title: string, legacy = legacyId): Promise<string> {
    const read = await t.gql<{ stories: { nodes: { id: string; title: string }[] } }>(
      'query ($l: ID!) { stories(legacyId: $l, first: 100) { nodes { id title } } }',
      { l: legacy },
      max,
    );
    return read.data!.stories.nodes.find((s) => s.title === title)!.id;
  }

  it('keeps an open story page live: its indexing, an edit, a take-back and a delete made elsewhere', async () => {
    await maxPage.goto(`${base}/app/legacies/${legacyId}/stories`);
    await maxPage.getByLabel('Title', { exact: true }).fill('The lighthouse');
    await maxPage
      .getByLabel('The story (text or Markdown)')
      .fill('Rose kept the lighthouse lamp lit through the storm of 1953.');
    await maxPage.locator('#story-visibility').selectOption('SHARED');
    await maxPage.getByRole('button', { name: 'Save story' }).click();
    await maxPage.getByText('“The lighthouse” saved: it is being indexed.').waitFor();
    const id = await storyId('The lighthouse');
    const url = `${base}/app/legacies/${legacyId}/stories/${id}`;

    // Olivia reads it while it is indexed; nothing below reloads her page.
    await oliviaPage.goto(url);
    let loads = 0;
    oliviaPage.on('load', () => loads++);
    await oliviaPage.getByRole('heading', { name: 'The lighthouse', level: 1 }).waitFor();
    const indexing = oliviaPage.getByText(/indexing \d+ of (\d+|…) passages/);
    await indexing.waitFor();
    await jobs.drain();
    await indexing.waitFor({ state: 'detached', timeout: 10_000 });

    // Max edits it in his context: her page shows the new title and text.
    await maxPage.goto(url);
    await maxPage.getByRole('button', { name: 'Edit' }).click();
    await maxPage.getByLabel('Title', { exact: true }).fill('The lighthouse in the storm');
    await maxPage
      .getByLabel('The story', { exact: true })
      .fill('Rose kept the lamp lit alone through the great storm of 1953.');
    await maxPage.getByRole('button', { name: 'Save', exact: true }).click();
    await maxPage.getByText('Story saved.').waitFor();
    await oliviaPage
      .getByRole('heading', { name: 'The lighthouse in the storm', level: 1 })
      .waitFor({ timeout: 10_000 });
    await oliviaPage.getByText('alone through the great storm of 1953.').waitFor();
    await jobs.drain();

    // Taken back: her page says so and keeps none of it; shared again, it is back.
    const noLonger = oliviaPage.getByText('This story is no longer shared with you', {
      exact: false,
    });
    await maxPage.getByRole('button', { name: /^Take back/ }).click();
    await noLonger.waitFor({ timeout: 10_000 });
    expect(await oliviaPage.getByText('great storm of 1953').count()).toBe(0);
    expect(await oliviaPage.getByRole('heading', { level: 1 }).textContent()).toBe('Story');
    expect(await seriousViolations(oliviaPage)).toEqual([]);
    await maxPage.getByRole('button', { name: /^Share/ }).click();
    await oliviaPage.getByText('alone through the great storm of 1953.').waitFor({
      timeout: 10_000,
    });
    expect(await noLonger.count()).toBe(0);

    // Deleted from Max's first tab: his second tab and Olivia's page both say so.
    const maxSecond = await maxContext.newPage();
    await maxSecond.goto(url);
    await maxSecond.getByRole('heading', { name: 'The lighthouse in the storm' }).waitFor();
    await maxPage.getByRole('button', { name: /^Delete/ }).click();
    await maxPage.getByRole('button', { name: 'Delete for good' }).click();
    await maxSecond.getByText('This story was deleted.').waitFor({ timeout: 10_000 });
    expect(await maxSecond.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
    await noLonger.waitFor({ timeout: 10_000 });
    expect(await oliviaPage.getByText('great storm of 1953').count()).toBe(0);
    expect(loads).toBe(0);
    await maxSecond.close();
  }, 90_000);

  const FILES = [
    {
      file: 'eulogy.docx',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      title: 'Eulogy for Joe',
      typed: true,
      format: 'DOCX',
      text: 'Joe mended every bicycle on Quay Street for nothing but a cup of tea.',
    },
    {
      file: 'joe-recipes.txt',
      mimeType: 'text/plain',
      title: 'joe-recipes',
      typed: false,
      format: 'TEXT',
      text: 'Joe’s brown bread: wholemeal, buttermilk, a pinch of salt, forty minutes.',
    },
    {
      file: 'garden.md',
      mimeType: 'text/markdown',
      title: 'Joe’s garden',
      typed: false,
      format: 'MARKDOWN',
      text: 'He grew **runner beans** up the back wall every summer.',
    },
  ];

  it('uploads DOCX, plain text and Markdown, follows each to indexed by its id, and reads it page by page', async () => {
    const stories = `${base}/app/legacies/${joeId}/stories`;
    for (const f of FILES) {
      await maxPage.goto(stories);
      await maxPage.getByRole('heading', { name: 'Stories and documents about Joe' }).waitFor();
      // The list shows only stories written here: the upload is followed by its own id.
      await maxPage.getByLabel('Kind').selectOption('STORY');
      const buffer =
        f.format === 'DOCX'
          ? await makeDocx()
          : Buffer.from(f.format === 'MARKDOWN' ? `# ${f.title}\n\n${f.text}\n` : `${f.text}\n`);
      await maxPage.getByLabel('File to upload').setInputFiles({
        name: f.file,
        mimeType: f.mimeType,
        buffer,
      });
      if (f.typed) await maxPage.getByLabel(/^Document title/).fill(f.title);
      await maxPage.getByRole('button', { name: 'Upload', exact: true }).click();
      await maxPage.getByText('Uploaded.').waitFor();
      await maxPage.getByText(`Indexing “${f.title}”`, { exact: false }).waitFor();
      await jobs.drain();
      const ready = maxPage.getByText(
        new RegExp(`^“${f.title}” is ready: [1-9]\\d* passages?, findable in recall\\.$`),
      );
      await ready.waitFor({ timeout: 15_000 });
      expect(await listed(maxPage, f.title).count()).toBe(0);
      expect(await seriousViolations(maxPage)).toEqual([]);

      await maxPage.getByRole('link', { name: `Read “${f.title}”` }).click();
      await maxPage.getByRole('heading', { name: f.title, level: 1 }).waitFor();
      await maxPage.getByText(f.format, { exact: true }).waitFor();
      await maxPage.getByRole('heading', { name: 'Page 1 of 1' }).waitFor();
      await maxPage.getByText(f.text, { exact: false }).waitFor();
      expect(await maxPage.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
    }
  }, 120_000);

  it('shows more than a page of stories with “Show more”, each page kept live', async () => {
    for (let i = 1; i <= 52; i++) {
      const added = await t.gql(
        'mutation ($input: AddStoryInput!) { addStory(input: $input) { id } }',
        { input: { legacyId: joeId, title: `Note ${i}`, content: `Joe’s note number ${i}.` } },
        max,
      );
      expect(added.errors).toBeUndefined();
    }
    await jobs.drain();
    await maxPage.goto(`${base}/app/legacies/${joeId}/stories`);
    const items = maxPage.getByRole('list', { name: 'Stories' }).getByRole('listitem');
    await listed(maxPage, 'Note 52').waitFor();
    expect(await items.count()).toBe(50);
    const more = maxPage.getByRole('button', { name: 'Show more stories' });
    await more.click();
    // The three uploads, oldest, come on the second page.
    await listed(maxPage, 'Eulogy for Joe').waitFor();
    expect(await items.count()).toBe(55);
    await more.waitFor({ state: 'detached' });
    expect(await seriousViolations(maxPage)).toEqual([]);

    // Deleted elsewhere, one from each page: both leave the list, nothing shows twice.
    for (const title of ['Note 52', 'Eulogy for Joe']) {
      const gone = await t.gql(
        'mutation ($id: ID!) { deleteStory(id: $id) }',
        {
          id: await storyId(title, joeId),
        },
        max,
      );
      expect(gone.errors).toBeUndefined();
    }
    await listed(maxPage, 'Eulogy for Joe').waitFor({ state: 'detached', timeout: 10_000 });
    await listed(maxPage, 'Note 52').waitFor({ state: 'detached', timeout: 10_000 });
    const titles = await items.getByRole('link').allTextContents();
    expect(titles).toHaveLength(53);
    expect(new Set(titles).size).toBe(53);
    expect(titles.at(-1)).toBe('joe-recipes');
    expect(
      await phoneProblems(maxContext, `${base}/app/legacies/${joeId}/stories`, 'Note 51'),
    ).toEqual([]);
  }, 120_000);
  it('works at phone width', async () => {
    const stories = `${base}/app/legacies/${legacyId}/stories`;
    expect(await phoneProblems(maxContext, stories, 'Write a story')).toEqual([]);
  }, 30_000);

  it('raised no uncaught error in the pages', () => {
    expect(pageErrors).toEqual([]);
  });
});
