import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { StoryRepository } from '../../src/stories/story.repository.js';
import { StoryFormat, StoryKind, StoryVisibility } from '../../src/stories/story.enums.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { exportArchive, jsonLines, unzipAll } from '../support/archives.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { CONTEXT, launchChromium } from './browser.js';

/**
 * Nothing in an exported archive runs (issue 44). A legacy holds originals a browser would run
 * (an SVG with a script, a web page, stored as text the way a Keepsake without an allow list
 * kept them), and a Markdown story written as a script; its archive is exported, unzipped, and
 * its index.html opened from a file:// path in Chromium, as a family member opens it from the
 * unzipped folder. Every link of every page it leads to is clicked: no script runs (no dialog,
 * no console message, no title or global set), and each original opens as text.
 */
const RAN = 'archive-script-ran';
const SCRIPT = `alert('${RAN}');console.log('${RAN}');document.title='${RAN}';window.ran=1`;

describe('an exported archive, opened from its folder in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let olivia: TestUser;
  let files: Map<string, Buffer>;
  const folder = mkdtempSync(join(tmpdir(), 'keepsake-archive-'));
  const dialogs: string[] = [];
  const consoleMessages: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    olivia = await t.user('originals-olivia', { email: 'olivia@originals.example.com' });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Rose" }) { id } }',
      {},
      olivia,
    );
    const legacyId = created.data!.createLegacy.id;
    const story = await t.gql(
      'mutation($l: ID!, $c: String!) { addStory(input: { legacyId: $l, title: "A script", content: $c }) { id } }',
      { l: legacyId, c: `<script>${SCRIPT}</script>\n\nShe kept bees.` },
      olivia,
    );
    expect(story.errors).toBeUndefined();
    const me = await t.gql<{ me: { id: string } }>('{ me { id } }', {}, olivia);
    // As a Keepsake before the allow list stored them: text, under the names they came with.
    const hostile: [string, string][] = [
      [
        'drawing.svg',
        `<svg xmlns="http://www.w3.org/2000/svg" onload="${SCRIPT}"><script>${SCRIPT}</script></svg>`,
      ],
      [
        'page.html',
        `<!doctype html><html><body onload="${SCRIPT}"><script>${SCRIPT}</script></body></html>`,
      ],
      [
        'feed.xml',
        `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><script>${SCRIPT}</script></html>`,
      ],
    ];
    const stories = t.app.get(StoryRepository);
    await t.app.get(DataSource).transaction(async (m) => {
      for (const [fileName, content] of hostile) {
        const row = await stories.insert(m, {
          legacyId,
          authorId: me.data!.me.id,
          title: fileName,
          kind: StoryKind.DOCUMENT,
          format: StoryFormat.TEXT,
          visibility: StoryVisibility.PRIVATE,
          pages: [{ number: 1, text: content }],
          sizeBytes: Buffer.byteLength(content),
          fileName,
          mimeType: 'text/plain; charset=utf-8',
          occurredAt: null,
        });
        await stories.saveFile(m, row.id, Buffer.from(content));
      }
    });
    await t.app.get(JobsService).drain();
    files = await unzipAll((await exportArchive(t, olivia, legacyId)).zip);
    for (const [name, bytes] of files) {
      mkdirSync(dirname(join(folder, name)), { recursive: true });
      writeFileSync(join(folder, name), bytes);
    }
    browser = await launchChromium();
    const context = await browser.newContext(CONTEXT);
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (message) => consoleMessages.push(message.text()));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('keeps the originals under names that open as text', () => {
    const originals = jsonLines<{ file: string; fileName: string | null }>(
      files,
      'data/stories.jsonl',
    ).map((s) => s.file.split('/').pop());
    expect(originals.sort()).toEqual([
      'A script.md',
      'drawing.svg.txt',
      'feed.xml.txt',
      'page.html.txt',
    ]);
    const index = files.get('index.html')!.toString('utf8');
    expect(index).not.toMatch(/<script/i);
    expect(index).toContain(`Content-Security-Policy" content="default-src 'none'`);
  });

  it('runs no script when every link of every page is clicked', async () => {
    const start = pathToFileURL(join(folder, 'index.html')).href;
    const pages = [start];
    const opened: { href: string; contentType: string }[] = [];
    for (let p = 0; p < pages.length; p++) {
      await page.goto(pages[p]);
      const links = await page.locator('a[href]').count();
      for (let i = 0; i < links; i++) {
        if (i > 0) await page.goto(pages[p]);
        const link = page.locator('a[href]').nth(i);
        const href = (await link.getAttribute('href'))!;
        await link.click();
        await page.waitForLoadState('load');
        const seen = (await page.evaluate(
          '({ url: location.href, contentType: document.contentType, title: document.title, ran: "ran" in window })',
        )) as { url: string; contentType: string; title: string; ran: boolean };
        expect({ href, title: seen.title, ran: seen.ran }).toEqual({
          href,
          title: expect.not.stringContaining(RAN),
          ran: false,
        });
        opened.push({ href: seen.url, contentType: seen.contentType });
        const target = seen.url.split('#')[0];
        if (seen.contentType === 'text/html' && !pages.includes(target)) pages.push(target);
      }
    }
    expect(dialogs).toEqual([]);
    expect(consoleMessages.filter((m) => m.includes(RAN))).toEqual([]);
    // Every original was reached, and opened as text.
    const originals = opened.filter((o) => /\/stories\/[^/]+\/[^/]+$/.test(o.href));
    expect(new Set(originals.map((o) => decodeURIComponent(o.href.split('/').pop()!)))).toEqual(
      new Set(['A script.md', 'drawing.svg.txt', 'feed.xml.txt', 'page.html.txt']),
    );
    for (const o of originals) expect(['text/plain', 'text/markdown']).toContain(o.contentType);
    // The pages themselves: index, a page per story, all of Keepsake's making.
    expect(pages.length).toBe(5);
  });
});
