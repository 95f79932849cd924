import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { inMemoryHoldout } from '../../src/signals/memory-holdout.js';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  CONTEXT,
  launchChromium,
  phoneProblems,
  screenshots,
  seriousViolations,
  signInWithToken,
  until,
} from './browser.js';

/** Coloured pixels on every chart canvas of the page: each was drawn. (Runs in the page.) */
const DRAWN = `[...document.querySelectorAll('[data-testid=chart]')].map((canvas) => {
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let n = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
  return n;
})`;

/**
 * The operators' page: a platform administrator sees the upgrade triggers over a period, the
 * memory uplift with its intervals drawn, failed jobs (and retries one), and the audit log.
 * A member who is not an administrator is not offered the page and is refused its data.
 */
describe('The operators’ page in the console', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let owner: TestUser;
  let admin: TestUser;
  let jobId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    fake.setHandler('chat', (request) =>
      request.body.stream ? reply.stream(['Earl Grey ', 'tea every morning, then.']) : reply.auto(),
    );
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      MODEL_MAX_RETRIES: '0',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      MEMORY_AB_HOLDOUT: '0.5',
      TRIGGER_MIN_ASSEMBLIES: '1',
    });
    base = t.url.replace('/graphql', '');
    owner = await t.user('ops-owner', { email: 'owner@example.com', name: 'Owen' });
    admin = await t.user('ops-admin', { email: 'admin@example.com', name: 'Ada', admin: true });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandma Rose" }) { id } }',
      {},
      owner,
    );
    const legacyId = created.data!.createLegacy.id;
    await t.gql(
      'mutation($i: RememberThisInput!) { rememberThis(input: $i) { memory { id } } }',
      { i: { content: 'I drink Earl Grey tea every morning.', legacyId } },
      owner,
    );
    // Replies in both arms of the A/B holdout: two conversations each, two turns each.
    const arms = { memory: 0, holdout: 0 };
    while (arms.memory < 2 || arms.holdout < 2) {
      const started = await t.gql<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        owner,
      );
      const id = started.data!.startConversation.id;
      const arm = inMemoryHoldout(id, 0.5) ? 'holdout' : 'memory';
      if (arms[arm] >= 2) continue;
      arms[arm]++;
      for (const content of ['What tea do I drink in the morning?', 'You forgot my tea.']) {
        const sent = await t.gql(
          'mutation($input: SendMessageInput!) { sendMessage(input: $input) { reply { id } } }',
          { input: { conversationId: id, content } },
          owner,
        );
        expect(sent.errors).toBeUndefined();
      }
    }
    // A job that used up its attempts, as the audit test makes one.
    const [job] = await t.app.get(DataSource).query<{ id: string }[]>(
      `INSERT INTO jobs (type, key, payload, status, attempts, last_error)
         VALUES ('test:ops-page', 'ops-1', '{}'::jsonb, 'FAILED', 3, 'the model timed out') RETURNING id`,
    );
    jobId = job.id;

    browser = await launchChromium();
    context = await browser.newContext(CONTEXT);
    context.on('weberror', (e) => pageErrors.push(e.error().stack ?? e.error().message));
    page = await context.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  it('is not offered to a member who is not an administrator, and its data is refused', async () => {
    const other = await context.newPage();
    await signInWithToken(other, base, owner.token);
    expect(await other.getByRole('link', { name: 'For operators' }).count()).toBe(0);
    await other.goto(`${base}/app/operators`);
    await other.getByRole('alert').first().waitFor();
    expect(await other.getByRole('heading', { name: 'Upgrade triggers' }).count()).toBe(0);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.close();
  }, 60_000);

  it('shows the upgrade triggers of the period and the uplift with its intervals drawn', async () => {
    await signInWithToken(page, base, admin.token);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'For operators' })
      .click();
    await page.getByRole('heading', { name: 'Upgrade triggers' }).waitFor();
    const triggers = page.getByRole('list', { name: 'Triggers' }).getByRole('listitem');
    expect(await triggers.count()).toBe(7);
    // Each trigger in its unit, against its threshold.
    const complaints = triggers.filter({ hasText: 'Forgot complaints' });
    await complaints.getByText('a week against 3.0 a week', { exact: false }).waitFor();
    await triggers
      .filter({ hasText: 'P95 latency' })
      .getByText(/ms against 3000 ms/)
      .waitFor();

    await page.getByRole('heading', { name: 'Does memory help?' }).waitFor();
    const estimates = page.getByRole('list', { name: 'Uplift estimates' }).getByRole('listitem');
    expect(await estimates.count()).toBe(3);
    await page
      .getByRole('img', { name: /^Replies that referenced a memory: difference/ })
      .waitFor();
    await page.getByRole('img', { name: /^Conversation length: difference/ }).waitFor();
    await until(page, `${DRAWN}.length >= 2 && ${DRAWN}.every((n) => n > 500)`);
    const arms = page.getByRole('row').filter({ hasText: /With memory|Holdout/ });
    expect(await arms.count()).toBe(2);
    await arms
      .filter({ hasText: 'With memory' })
      .getByRole('cell')
      .first()
      .getByText('2')
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // An empty period: no assemblies, so no trigger has data.
    await page.getByLabel('From').fill('2020-01-01');
    await page.getByLabel('To', { exact: true }).fill('2020-01-07');
    await page.getByRole('button', { name: 'Show the period' }).click();
    await page.getByText('0 context assemblies', { exact: false }).waitFor();
    expect(await triggers.filter({ hasText: 'Not enough data' }).count()).toBeGreaterThanOrEqual(6);
    await page.getByText('Not enough replies in both arms to estimate it.').first().waitFor();
  }, 60_000);

  it('retries a failed job, and the audit log records it', async () => {
    await page.reload();
    const job = page
      .getByRole('list', { name: 'Failed jobs' })
      .getByRole('listitem')
      .filter({ hasText: 'test:ops-page' });
    await job.getByText('the model timed out').waitFor();
    const audit = page.getByRole('table', { name: 'Audit log' });
    await audit.getByRole('row').filter({ hasText: 'Failed jobs' }).first().waitFor();
    await screenshots(context, `${base}/app/operators`, 'operators', 'Does memory help?');
    await job.getByRole('button', { name: 'Retry test:ops-page' }).click();
    await page.getByText('test:ops-page queued again (pending).').waitFor();
    await job.waitFor({ state: 'detached' });
    await audit.getByRole('row').filter({ hasText: 'Retry job' }).waitFor();
    const [row] = await t.app
      .get(DataSource)
      .query<{ status: string }[]>('SELECT status FROM jobs WHERE id = $1', [jobId]);
    expect(row.status).toBe('PENDING');
    expect(await seriousViolations(page)).toEqual([]);
  }, 60_000);

  it('shows more than a page of failed jobs and of the audit log', async () => {
    const db = t.app.get(DataSource);
    await db.query(
      `INSERT INTO jobs (type, key, payload, status, attempts, last_error, updated_at)
       SELECT 'test:ops-more', 'more-' || n, '{}'::jsonb, 'FAILED', 3, 'it failed', now() - n * interval '1 minute'
         FROM generate_series(1, 54) n`,
    );
    // Older than anything the page itself records: they come last, the oldest on the last page.
    await db.query(
      `INSERT INTO audit_log (operation, target_conversation_id, created_at)
       SELECT 'RETRIEVAL_DEBUG', ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid,
              now() - n * interval '1 day'
         FROM generate_series(1, 60) n`,
    );
    await page.reload();
    const jobs = page.getByRole('list', { name: 'Failed jobs' }).getByRole('listitem');
    await jobs.getByText('more-1', { exact: true }).waitFor();
    expect(await jobs.count()).toBe(50);
    expect(await jobs.getByText('more-54', { exact: true }).count()).toBe(0);
    const moreJobs = page.getByRole('button', { name: 'Show more failed jobs' });
    await moreJobs.click();
    await jobs.getByText('more-54', { exact: true }).waitFor();
    expect(await jobs.count()).toBe(54);
    await moreJobs.waitFor({ state: 'detached' });

    const rows = page.getByRole('table', { name: 'Audit log' }).getByRole('row');
    const oldest = page.getByText('conversation 00000000-0000-4000-8000-000000000060', {
      exact: true,
    });
    await page.getByText('conversation 00000000-0000-4000-8000-000000000001').waitFor();
    expect(await rows.count()).toBe(51);
    expect(await oldest.count()).toBe(0);
    const moreEntries = page.getByRole('button', { name: 'Show more audit log entries' });
    await moreEntries.click();
    await oldest.waitFor();
    await moreEntries.waitFor({ state: 'detached' });
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM audit_log WHERE operation = 'RETRIEVAL_DEBUG'`,
    );
    expect(n).toBe(60);
    expect(await rows.filter({ hasText: 'Retrieval debug' }).count()).toBe(60);
    expect(await seriousViolations(page)).toEqual([]);
  }, 60_000);

  it('works at phone width', async () => {
    expect(await phoneProblems(context, `${base}/app/operators`, 'Does memory help?')).toEqual([]);
  }, 30_000);

  it('raised no uncaught error in the pages', () => {
    expect(pageErrors).toEqual([]);
  });
});
