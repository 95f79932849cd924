import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { signToken, startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { CONTEXT, launchChromium, screenshots, seriousViolations } from './browser.js';

/**
 * The family console in Debian's Chromium, against the real service on an embedded database:
 * an owner and a member, each in a browser context of their own, as the issue describes.
 */
describe('The family console in a browser', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let browser: Browser;
  let base: string;
  let owner: TestUser;
  let member: TestUser;
  let carol: TestUser;
  let ownerContext: BrowserContext;
  let memberContext: BrowserContext;
  let ownerPage: Page;
  let memberPage: Page;
  let legacyId: string;
  const pageErrors: string[] = [];

  const REPLY = ['Grandpa ', 'caught ', 'a pike ', 'that summer.'];

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    // The agent's replies stream slowly enough for the page to show them growing.
    fake.setHandler('chat', (request) =>
      request.body.stream ? reply.stream(REPLY, { chunkDelayMs: 300 }) : reply.auto(),
    );
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      MODEL_MAX_RETRIES: '0',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
    });
    base = t.url.replace('/graphql', '');
    owner = await t.user('browser-owner', { email: 'olivia@example.com', name: 'Olivia' });
    member = await t.user('browser-member', { email: 'max@example.com', name: 'Max' });
    carol = await t.user('browser-carol', { email: 'carol@example.com', name: 'Carol' });
    browser = await launchChromium();
    ownerContext = await browser.newContext({ ...CONTEXT, acceptDownloads: true });
    memberContext = await browser.newContext(CONTEXT);
    // Uncaught errors in either page fail the last test.
    for (const context of [ownerContext, memberContext]) {
      context.on('weberror', (e) => pageErrors.push(e.error().stack ?? e.error().message));
    }
    ownerPage = await ownerContext.newPage();
    memberPage = await memberContext.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  async function signIn(page: Page, user: TestUser) {
    await page.goto(`${base}/app/`);
    await page.waitForURL('**/app/sign-in');
    await page.getByRole('heading', { name: 'Development sign-in' }).waitFor();
    await page.getByLabel('Token').fill(user.token);
    await page.getByRole('button', { name: 'Sign in with this token' }).click();
    await page.getByRole('heading', { name: 'Your legacies' }).waitFor();
    await page.getByText('Development sign-in').first().waitFor();
  }

  async function expectAccessible(page: Page) {
    expect(await seriousViolations(page)).toEqual([]);
  }

  const factItem = (page: Page, text: string) =>
    page.getByRole('listitem').filter({ has: page.getByText(text, { exact: true }) });

  it('refuses a token the API does not accept, and a session it stops accepting', async () => {
    const page = await memberContext.newPage();
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in with this token' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /token|authenticat/i })
      .waitFor();
    await expectAccessible(page);
    // A session whose token the API refuses (wrong signature) goes back to sign-in.
    // The page's code runs in the browser, as a string: this project's types are Node's.
    await page.evaluate(
      `localStorage.setItem('keepsake.console.session', JSON.stringify({ kind: 'development', expiresAt: null }));
       document.cookie = 'keepsake_session=e30.e30.c2ln; path=/'`,
    );
    await page.goto(`${base}/app/memories`);
    await page.waitForURL('**/app/sign-in');
    await page.getByText('did not accept your sign-in').waitFor();
    // A token that expires while the page is open: back to sign-in, saying why.
    const shortLived = await signToken('browser-short', {}, { expiresIn: '4s' });
    await page.getByLabel('Token').fill(shortLived);
    await page.getByRole('button', { name: 'Sign in with this token' }).click();
    await page.getByRole('heading', { name: 'Your legacies' }).waitFor();
    await page.getByText('Your sign-in has ended: sign in again.').waitFor({ timeout: 10_000 });
    expect(page.url()).toMatch(/\/app\/sign-in$/);
    await page.evaluate('localStorage.clear()');
    await page.close();
  }, 60_000);

  it('keeps its token where no script reads it, for a reload and a new tab, until sign-out', async () => {
    const context = await browser.newContext(CONTEXT);
    const page = await context.newPage();
    // A token of this session's own: signing out revokes the token it signed in with, and
    // the later tests go on acting as Carol with hers.
    const session = {
      ...carol,
      token: await signToken(
        carol.sub,
        { email: carol.email, email_verified: true, name: carol.name },
        { expiresIn: '50m' },
      ),
    };
    const opened = page.waitForResponse((r) => r.url().endsWith('/app/session'));
    await signIn(page, session);
    expect((await opened).status()).toBe(200);
    // Nothing a script of this origin can read holds it: not storage, not a cookie it sees.
    const readable = (p: Page) =>
      p.evaluate(
        'JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie])',
      ) as Promise<string>;
    expect(await readable(page)).not.toContain(session.token.split('.')[2]);
    expect(await readable(page)).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    // The session goes on across a reload and in another tab (the HttpOnly cookie).
    await page.reload();
    await page.getByRole('heading', { name: 'Your legacies' }).waitFor();
    const other = await context.newPage();
    await other.goto(`${base}/app/memories`);
    await other.getByRole('heading', { level: 1, name: /memories/i }).waitFor();
    expect(await readable(other)).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    // Signing out ends it for every tab that loads next.
    const closed = page.waitForResponse((r) => r.url().endsWith('/app/session'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/app/sign-in');
    expect((await closed).status()).toBe(200);
    await other.goto(`${base}/app/`);
    await other.waitForURL('**/app/sign-in');
    // The token it signed in with is refused from now on; Carol's other token is not.
    const revoked = await t.gql(`{ me { id } }`, {}, session);
    expect(revoked.errors?.[0]?.extensions?.reason).toBe('TOKEN_REVOKED');
    expect((await t.gql(`{ me { id } }`, {}, carol)).errors).toBeUndefined();
    await context.close();
  }, 60_000);

  it('lets the owner create a legacy and invite the member, who accepts', async () => {
    await signIn(ownerPage, owner);
    await expectAccessible(ownerPage);
    await ownerPage.getByLabel('Name').fill('Grandpa Joe');
    await ownerPage.getByLabel('Description').fill('Stories of Joe, fisherman and joiner.');
    await ownerPage.getByRole('button', { name: 'Create legacy' }).click();
    await ownerPage.getByRole('heading', { name: 'Grandpa Joe', level: 1 }).waitFor();
    legacyId = /\/legacies\/([^/]+)/.exec(ownerPage.url())![1];

    await ownerPage.getByLabel('Email').fill(member.email!);
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.getByText(`Invitation sent to ${member.email}.`).waitFor();
    await ownerPage.getByText(`${member.email} as member`).waitFor();
    await expectAccessible(ownerPage);

    await signIn(memberPage, member);
    await memberPage.getByRole('heading', { name: 'Invitations for you' }).waitFor();
    await memberPage.getByRole('button', { name: 'Accept' }).click();
    await memberPage.getByRole('heading', { name: 'Grandpa Joe', level: 1 }).waitFor();
    await memberPage.getByText('You are a member of this legacy.').waitFor();

    // Carol, a third member, takes part through the API only.
    const invited = await t.gql<{ addLegacyMember: { invitation: { id: string } } }>(
      `mutation ($legacyId: ID!) { addLegacyMember(input: { legacyId: $legacyId, email: "carol@example.com" }) { invitation { id } } }`,
      { legacyId },
      owner,
    );
    const accepted = await t.gql(
      `mutation ($id: ID!) { acceptInvitation(id: $id) { id } }`,
      { id: invited.data!.addLegacyMember.invitation.id },
      carol,
    );
    expect(accepted.errors).toBeUndefined();
  }, 90_000);

  it('shows a fact the member shares on the owner’s page without reload, and moderation takes it away', async () => {
    await ownerPage.goto(`${base}/app/legacies/${legacyId}/facts`);
    await memberPage.goto(`${base}/app/legacies/${legacyId}/facts`);
    await ownerPage.getByText('No facts yet: write the first one below.').waitFor();
    await memberPage.getByText('No facts yet: write the first one below.').waitFor();

    const text = 'Joe built the boat shed in 1962.';
    await memberPage.getByLabel('One sentence about the legacy').fill(text);
    await memberPage.getByLabel('Category', { exact: true }).last().selectOption('MILESTONE');
    const answered = memberPage.waitForResponse(
      (r) => r.url().endsWith('/graphql') && !!r.request().postData()?.includes('AddFact'),
    );
    await memberPage.getByRole('button', { name: 'Add fact' }).click();
    await answered;
    // Asked again as soon as it is added: no "No facts yet" waiting for the live event.
    await factItem(memberPage, text).getByText('Only you').waitFor({ timeout: 10_000 });
    expect(await memberPage.getByText('No facts yet').count()).toBe(0);
    // Private: the owner's page does not show it.
    await ownerPage.waitForTimeout(500);
    expect(await factItem(ownerPage, text).count()).toBe(0);

    const ownerUrl = ownerPage.url();
    await factItem(memberPage, text).getByRole('button', { name: 'Share' }).click();
    await factItem(ownerPage, text).waitFor({ timeout: 10_000 });
    expect(ownerPage.url()).toBe(ownerUrl);
    await factItem(ownerPage, text).getByText('by Max').waitFor();
    await expectAccessible(ownerPage);

    // The member watches the family's shared facts; the owner, as admin, makes it private.
    await memberPage.getByLabel('Visibility').selectOption('SHARED');
    await factItem(memberPage, text).waitFor();
    await factItem(ownerPage, text).getByRole('button', { name: 'Make private' }).click();
    await factItem(ownerPage, text).waitFor({ state: 'detached', timeout: 10_000 });
    await factItem(memberPage, text).waitFor({ state: 'detached', timeout: 10_000 });
    // Still the member's own private fact: it is only unshared, never shown to the owner.
    await memberPage.getByLabel('Visibility').selectOption('');
    await factItem(memberPage, text).getByText('Only you').waitFor();

    // A fact Carol shares reaches the member live; once the owner makes it private it
    // disappears from the member's page, and its URL no longer shows it to the member.
    const carolText = 'Joe sang in the church choir.';
    const added = await t.gql<{ addFact: { id: string } }>(
      `mutation ($legacyId: ID!, $content: String!) { addFact(input: { legacyId: $legacyId, content: $content, category: HOBBY, visibility: SHARED }) { id } }`,
      { legacyId, content: carolText },
      carol,
    );
    const carolFactId = added.data!.addFact.id;
    await factItem(memberPage, carolText).waitFor({ timeout: 10_000 });
    await factItem(ownerPage, carolText).waitFor({ timeout: 10_000 });
    await factItem(ownerPage, carolText).getByRole('button', { name: 'Make private' }).click();
    await factItem(memberPage, carolText).waitFor({ state: 'detached', timeout: 10_000 });
    await memberPage.goto(`${base}/app/legacies/${legacyId}/facts/${carolFactId}`);
    await memberPage.getByText('This fact does not exist or is not shared with you.').waitFor();
    await expectAccessible(memberPage);
  }, 120_000);

  it('lets the member edit, delete and restore a fact, with its history as a timeline', async () => {
    await memberPage.goto(`${base}/app/legacies/${legacyId}/facts`);
    const text = 'Joe built the boat shed in 1962.';
    const edited = 'Joe built the boat shed in 1963.';
    await factItem(memberPage, text).getByRole('button', { name: 'Edit' }).click();
    await memberPage.getByRole('textbox', { name: 'Fact', exact: true }).fill(edited);
    await memberPage.getByRole('button', { name: 'Save' }).click();
    await factItem(memberPage, edited).getByRole('button', { name: 'Edit' }).waitFor();
    await factItem(memberPage, edited).getByRole('button', { name: 'Delete' }).click();
    await factItem(memberPage, edited).waitFor({ state: 'detached' });
    await memberPage.getByLabel('Status').selectOption('DELETED');
    await factItem(memberPage, edited).getByText('Deleted', { exact: true }).waitFor();
    await factItem(memberPage, edited).getByRole('button', { name: 'Restore' }).click();
    await factItem(memberPage, edited).waitFor({ state: 'detached' });
    await memberPage.getByLabel('Status').selectOption('ACTIVE');
    // Searchable, and filtered by category.
    await memberPage.getByLabel('Search').fill('boat shed');
    await memberPage.getByRole('button', { name: 'Search' }).click();
    await factItem(memberPage, edited).waitFor();
    await memberPage.getByLabel('Category').first().selectOption('HOBBY');
    await memberPage.getByText('No facts match.').waitFor();
    await memberPage.getByLabel('Category').first().selectOption('');
    await factItem(memberPage, edited).waitFor();
    await factItem(memberPage, edited)
      .getByRole('link', { name: /History/ })
      .click();
    await memberPage.getByRole('heading', { name: 'Timeline' }).waitFor();
    for (const action of ['Created', 'Visibility changed', 'Updated', 'Deleted', 'Restored']) {
      await memberPage.getByRole('strong').filter({ hasText: action }).first().waitFor();
    }
    await expectAccessible(memberPage);
  }, 60_000);

  it('previews what a plain member sees of the owner’s own facts, as the family sees them', async () => {
    const text = 'Joe kept bees behind the shed.';
    for (let i = 0; i < 2; i++) {
      const added = await t.gql(
        `mutation ($legacyId: ID!, $content: String!) { addFact(input: { legacyId: $legacyId, content: $content, category: HOBBY, visibility: SHARED }) { id } }`,
        { legacyId, content: text },
        owner,
      );
      expect(added.errors).toBeUndefined();
    }
    await ownerPage.goto(`${base}/app/legacies/${legacyId}/facts`);
    // Olivia's own view: she said it twice (the second time in private, as far as others know).
    await factItem(ownerPage, text)
      .getByText(/by you .* said 2 times/)
      .waitFor();
    await ownerPage.getByLabel('Show what a plain member sees').check();
    await factItem(ownerPage, text)
      .getByText(/by Olivia/)
      .waitFor();
    expect(await factItem(ownerPage, text).textContent()).not.toMatch(/said 2 times/);
    expect(await factItem(ownerPage, text).getByRole('button').count()).toBe(0);
    await expectAccessible(ownerPage);
    // The member sees the same.
    await memberPage.goto(`${base}/app/legacies/${legacyId}/facts`);
    await factItem(memberPage, text)
      .getByText(/by Olivia/)
      .waitFor();
    expect(await factItem(memberPage, text).textContent()).not.toMatch(/said 2 times/);
    await ownerPage.getByLabel('Show what a plain member sees').uncheck();
    await factItem(ownerPage, text)
      .getByText(/by you .* said 2 times/)
      .waitFor();
  }, 60_000);

  it('streams the agent’s reply into the conversation page, with what was used', async () => {
    await ownerPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    await ownerPage.getByLabel('Title (optional)').fill('The big catch');
    await ownerPage.getByRole('button', { name: 'Start' }).click();
    await ownerPage.getByRole('heading', { name: 'The big catch' }).waitFor();
    // The default, said before anything is: off, as a new conversation starts.
    await ownerPage
      .getByText('Remembering is off in this conversation. New conversations start with it off', {
        exact: false,
      })
      .waitFor();
    const remember = ownerPage.getByRole('switch', {
      name: /Remember what I say in this conversation/,
    });
    expect(await remember.isChecked()).toBe(false);
    await remember.click();
    await ownerPage.getByText('Remember what I say in this conversation: on').waitFor();
    await ownerPage
      .getByText('Keepsake may remember things you tell it', { exact: false })
      .waitFor();

    await ownerPage.getByLabel('Your message').fill('Tell me about the big catch.');
    await ownerPage.getByRole('button', { name: 'Send' }).click();
    // Part of the reply shows before the whole of it: it streams in.
    const streaming = ownerPage.getByTestId('streaming-reply');
    await streaming.getByText('Grandpa caught', { exact: false }).waitFor({ timeout: 10_000 });
    expect(await streaming.textContent()).not.toContain('that summer.');
    await ownerPage
      .getByRole('listitem')
      .filter({ hasText: 'Grandpa caught a pike that summer.' })
      .waitFor({ timeout: 15_000 });
    await ownerPage.getByText('What Keepsake used for this reply').click();
    // No model name or token count unless one asks for the technical details.
    expect(await ownerPage.getByText('openai:fake-chat', { exact: false }).isVisible()).toBe(false);
    await ownerPage.getByText('Technical details').click();
    await ownerPage.getByText('openai:fake-chat', { exact: false }).waitFor();
    await expectAccessible(ownerPage);
  }, 60_000);

  it('exports memories as files whose rows match the memories', async () => {
    await ownerPage.goto(`${base}/app/memories`);
    for (const content of ['I love sea fishing.', 'My sister is called Anna.']) {
      await ownerPage.getByLabel('What to remember, in your words').fill(content);
      await ownerPage.getByRole('button', { name: 'Remember', exact: true }).click();
      await ownerPage
        .getByRole('list', { name: 'Memories' })
        .getByRole('listitem')
        .filter({ hasText: content })
        .waitFor();
    }
    const listed = await t.gql<{ memories: { nodes: { id: string; content: string }[] } }>(
      '{ memories(first: 100) { nodes { id content } } }',
      {},
      owner,
    );
    const memories = listed.data!.memories.nodes;
    expect(memories.length).toBeGreaterThanOrEqual(2);

    const [json] = await Promise.all([
      ownerPage.waitForEvent('download'),
      ownerPage.getByRole('button', { name: 'Export as JSON' }).click(),
    ]);
    const exported = JSON.parse(readFileSync(await json.path(), 'utf8')) as {
      memories: { id: string; content: string }[];
    };
    expect(exported.memories.map((m) => [m.id, m.content]).sort()).toEqual(
      memories.map((m) => [m.id, m.content]).sort(),
    );

    const [csv] = await Promise.all([
      ownerPage.waitForEvent('download'),
      ownerPage.getByRole('button', { name: 'Export as CSV' }).click(),
    ]);
    expect(csv.suggestedFilename()).toMatch(/\.csv$/);
    const rows = readFileSync(await csv.path(), 'utf8')
      .trim()
      .split(/\r?\n/);
    expect(rows).toHaveLength(memories.length + 1);
    for (const m of memories) expect(rows.some((row) => row.includes(m.id))).toBe(true);

    // Forget with undo.
    const item = ownerPage
      .getByRole('list', { name: 'Memories' })
      .getByRole('listitem')
      .filter({ hasText: 'I love sea fishing.' });
    await item.getByRole('button', { name: /Forget/ }).click();
    await ownerPage.getByText('Forgot “I love sea fishing.”').waitFor();
    await item.waitFor({ state: 'detached' });
    await ownerPage.getByRole('button', { name: 'Undo' }).click();
    await ownerPage.getByText('Memory restored.').waitFor();
    await item.waitFor();
    await expectAccessible(ownerPage);
  }, 60_000);

  it('recalls across memories and facts', async () => {
    await ownerPage.goto(`${base}/app/legacies/${legacyId}/recall`);
    await ownerPage.getByLabel('What do you remember about…').fill('fishing');
    await ownerPage.getByRole('button', { name: 'Recall' }).click();
    await ownerPage
      .getByRole('list', { name: 'Recalled' })
      .getByText('I love sea fishing.', { exact: false })
      .waitFor({ timeout: 10_000 });
    await expectAccessible(ownerPage);
  }, 60_000);

  it('lets the owner edit the legacy and its persona, set roles, and send and cancel invitations', async () => {
    await ownerPage.goto(`${base}/app/legacies/${legacyId}`);
    await ownerPage.getByLabel('Description').fill('Fisherman, joiner, choir tenor.');
    await ownerPage
      .getByLabel(/^How Keepsake talks about/)
      .fill('You are Joe’s old friend from the yard. Speak plainly.');
    await ownerPage.getByRole('button', { name: 'Save' }).click();
    await ownerPage.getByText('Legacy saved.').waitFor();
    await ownerPage
      .getByRole('main')
      .getByText('Fisherman, joiner, choir tenor.')
      .first()
      .waitFor();

    await ownerPage.getByLabel('Role of Max').selectOption('ADMIN');
    await ownerPage.getByText('Max is now an admin.').waitFor();
    await ownerPage.getByLabel('Role of Max').selectOption('MEMBER');
    await ownerPage.getByText('Max is now a member.').waitFor();

    await ownerPage.getByLabel('Email').fill('uncle.bob@example.com');
    await ownerPage.getByLabel('Role', { exact: true }).selectOption('ADMIN');
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.getByText('uncle.bob@example.com as admin').waitFor();
    await ownerPage
      .getByRole('button', { name: 'Cancel invitation to uncle.bob@example.com' })
      .click();
    await ownerPage.getByText('Invitation to uncle.bob@example.com cancelled.').waitFor();
    await ownerPage.getByText('uncle.bob@example.com as admin').waitFor({ state: 'detached' });
    await expectAccessible(ownerPage);

    // The member sees the persona, and may decline an invitation to another legacy.
    await memberPage.goto(`${base}/app/legacies/${legacyId}`);
    await memberPage
      .getByText('You are Joe’s old friend from the yard.', { exact: false })
      .waitFor();
    const other = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Aunt May" }) { id } }',
      {},
      owner,
    );
    await t.gql(
      `mutation ($legacyId: ID!) { addLegacyMember(input: { legacyId: $legacyId, email: "max@example.com" }) { invitation { id } } }`,
      { legacyId: other.data!.createLegacy.id },
      owner,
    );
    await memberPage.goto(`${base}/app/`);
    const invitation = memberPage.getByRole('listitem').filter({ hasText: 'Aunt May' });
    await invitation.getByRole('button', { name: 'Decline' }).click();
    await invitation.waitFor({ state: 'detached' });
    expect(await memberPage.getByRole('link', { name: 'Aunt May' }).count()).toBe(0);
  }, 90_000);

  it('imports a conversation from a JSON file, with its progress', async () => {
    await memberPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    const file = {
      title: 'Letters from 1975',
      messages: [
        {
          role: 'user',
          content: 'Dad wrote from the yard every week.',
          occurredAt: '1975-03-01T09:00:00Z',
        },
        {
          role: 'assistant',
          content: 'What did he write about?',
          occurredAt: '1975-03-01T09:01:00Z',
        },
        {
          role: 'user',
          content: 'Mostly boats, and the weather.',
          occurredAt: '1975-03-01T09:02:00Z',
        },
      ],
    };
    await memberPage.getByLabel('Conversation file (JSON)').setInputFiles({
      name: 'letters.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(file)),
    });
    await memberPage.getByText('Imported 3 messages.').waitFor({ timeout: 15_000 });
    expect(await memberPage.getByRole('progressbar').getAttribute('value')).toBe('3');
    await memberPage.getByRole('link', { name: 'Open the imported conversation' }).click();
    await memberPage.getByRole('heading', { name: 'Letters from 1975' }).waitFor();
    await memberPage.getByText('Mostly boats, and the weather.').waitFor();

    // A file that is not a conversation says why, and imports nothing.
    await memberPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    await memberPage.getByLabel('Conversation file (JSON)').setInputFiles({
      name: 'bad.json',
      mimeType: 'application/json',
      buffer: Buffer.from(
        '{"messages":[{"role":"narrator","content":"x","occurredAt":"2020-01-01"}]}',
      ),
    });
    await memberPage.getByText('Message 1: role must be "user" or "assistant".').waitFor();
    await expectAccessible(memberPage);
  }, 60_000);

  it('pauses memory and imports memories from a file', async () => {
    await memberPage.goto(`${base}/app/memories`);
    const pause = memberPage.getByRole('switch', { name: /Remember things about me/ });
    expect(await pause.isChecked()).toBe(true);
    await pause.click();
    await memberPage.getByText('Remember things about me: paused').waitFor();
    await memberPage
      .getByText('Paused: Keepsake remembers nothing new about you', { exact: false })
      .waitFor();
    const me = await t.gql<{ me: { memoryPaused: boolean } }>(
      '{ me { memoryPaused } }',
      {},
      member,
    );
    expect(me.data!.me.memoryPaused).toBe(true);
    await pause.click();

    await memberPage.getByLabel('Import memories (a JSON export)').setInputFiles({
      name: 'memories.json',
      mimeType: 'application/json',
      buffer: Buffer.from(
        JSON.stringify({ memories: [{ content: 'I keep bees at the allotment.', type: 'FACT' }] }),
      ),
    });
    await memberPage.getByText(/^Imported 1 memories/).waitFor({ timeout: 15_000 });
    await memberPage
      .getByRole('list', { name: 'Memories' })
      .getByRole('listitem')
      .filter({ hasText: 'I keep bees at the allotment.' })
      .waitFor();
    await memberPage.getByLabel('Type').selectOption('GOAL');
    await memberPage.getByText('No memories match.').waitFor();
    await expectAccessible(memberPage);
  }, 60_000);

  it('forgets a recalled memory', async () => {
    await memberPage.goto(`${base}/app/legacies/${legacyId}/recall`);
    await memberPage.getByLabel('What do you remember about…').fill('bees allotment');
    await memberPage.getByRole('button', { name: 'Recall' }).click();
    const item = memberPage
      .getByRole('list', { name: 'Recalled' })
      .getByRole('listitem')
      .filter({ hasText: 'I keep bees at the allotment.' });
    await item.getByRole('button', { name: /Forget/ }).click();
    await memberPage.getByText('Forgotten: “I keep bees at the allotment.”').waitFor();
    await item.waitFor({ state: 'detached' });
    const left = await t.gql<{ memories: { nodes: { content: string }[] } }>(
      '{ memories(first: 100) { nodes { content } } }',
      {},
      member,
    );
    expect(left.data!.memories.nodes.map((m) => m.content)).not.toContain(
      'I keep bees at the allotment.',
    );
  }, 60_000);

  it('is accessible at phone width', async () => {
    const page = await ownerContext.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of [`/app/legacies/${legacyId}/facts`, '/app/memories', '/app/']) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await seriousViolations(page)).toEqual([]);
      // Nothing wider than the screen: no sideways scrolling.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    }
    await page.close();
  }, 60_000);

  it('writes screenshots of the main pages at desktop and phone width', async () => {
    for (const content of [
      'Joe worked as a joiner at the Harland yard for thirty years.',
      'Joe married Rose in 1958.',
    ]) {
      await t.gql(
        `mutation ($legacyId: ID!, $content: String!) { addFact(input: { legacyId: $legacyId, content: $content, category: MILESTONE, visibility: SHARED }) { id } }`,
        { legacyId, content },
        carol,
      );
    }
    const pages: [string, string, string][] = [
      ['legacies', '/app/', 'Grandpa Joe'],
      ['legacy', `/app/legacies/${legacyId}`, 'Members'],
      ['facts', `/app/legacies/${legacyId}/facts`, 'Joe married Rose'],
      ['conversations', `/app/legacies/${legacyId}/conversations`, 'The big catch'],
      ['memories', '/app/memories', 'In numbers'],
    ];
    for (const [name, path, ready] of pages) {
      await screenshots(ownerContext, `${base}${path}`, name, ready);
    }
    await screenshots(
      memberContext,
      `${base}/app/legacies/${legacyId}/facts`,
      'facts-member',
      'Joe built',
    );
    const conversation = await t.gql<{ conversations: { nodes: { id: string }[] } }>(
      `query ($legacyId: ID!) { conversations(legacyId: $legacyId) { nodes { id } } }`,
      { legacyId },
      owner,
    );
    const id = conversation.data!.conversations.nodes[0].id;
    await screenshots(
      ownerContext,
      `${base}/app/legacies/${legacyId}/conversations/${id}`,
      'conversation',
      'that summer.',
    );
    const memberFacts = await t.gql<{ facts: { nodes: { id: string; content: string }[] } }>(
      'query ($legacyId: ID!) { facts(legacyId: $legacyId) { nodes { id content } } }',
      { legacyId },
      member,
    );
    const shed = memberFacts.data!.facts.nodes.find((f) => f.content.includes('boat shed'))!;
    await screenshots(
      memberContext,
      `${base}/app/legacies/${legacyId}/facts/${shed.id}`,
      'fact-history',
      'Timeline',
    );
    const signedOut = await browser.newContext(CONTEXT);
    await screenshots(signedOut, `${base}/app/sign-in`, 'sign-in', 'Development sign-in');
    await signedOut.close();
  }, 120_000);

  it('raised no uncaught error in the pages', () => {
    expect(pageErrors).toEqual([]);
  });
});
