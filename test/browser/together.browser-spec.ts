import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeOpenAiServer, reply } from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  CONTEXT,
  launchChromium,
  phoneProblems,
  screenshots,
  seriousViolations,
  signInWithToken,
} from './browser.js';

/**
 * Together conversations in the console: Olivia and Max, each in a browser context of their
 * own, talk with the agent in one conversation. A reply made for Olivia alone, before Max was
 * brought in, reads as withheld on Max's page.
 */
describe('Together conversations in the console', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let browser: Browser;
  let base: string;
  let olivia: TestUser;
  let max: TestUser;
  let oliviaContext: BrowserContext;
  let maxContext: BrowserContext;
  let oliviaPage: Page;
  let maxPage: Page;
  let legacyId: string;
  let conversationUrl: string;
  const pageErrors: string[] = [];

  const ALONE_REPLY = 'He cooked kedgeree, just as you told me, Olivia.';
  const ROAST_REPLY = 'Roast beef every Sunday, then.';

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    // The agent answers by what the last turn asks: distinct replies to tell them apart.
    fake.setHandler('chat', (request) => {
      if (!request.body.stream) return reply.auto();
      const last = [...(request.body.messages ?? [])].reverse().find((m) => m.role === 'user');
      const asked = last?.content ?? '';
      const text = /cook/i.test(asked)
        ? ALONE_REPLY
        : /roast/i.test(asked)
          ? ROAST_REPLY
          : 'I see.';
      return reply.stream(text.split(/(?<= )/), { chunkDelayMs: 20 });
    });
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      MODEL_MAX_RETRIES: '0',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
    });
    base = t.url.replace('/graphql', '');
    olivia = await t.user('together-olivia', { email: 'olivia@example.com', name: 'Olivia' });
    max = await t.user('together-max', { email: 'max@example.com', name: 'Max' });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      {},
      olivia,
    );
    legacyId = created.data!.createLegacy.id;
    const invited = await t.gql<{ addLegacyMember: { invitation: { id: string } } }>(
      `mutation ($legacyId: ID!) { addLegacyMember(input: { legacyId: $legacyId, email: "max@example.com" }) { invitation { id } } }`,
      { legacyId },
      olivia,
    );
    const accepted = await t.gql(
      'mutation ($id: ID!) { acceptInvitation(id: $id) { id } }',
      { id: invited.data!.addLegacyMember.invitation.id },
      max,
    );
    expect(accepted.errors).toBeUndefined();

    browser = await launchChromium();
    oliviaContext = await browser.newContext(CONTEXT);
    maxContext = await browser.newContext(CONTEXT);
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
    await fake?.close();
  });

  const turn = (page: Page, text: string) =>
    page.getByRole('region', { name: 'Turns' }).getByRole('listitem').filter({ hasText: text });

  async function remembers(user: TestUser, id: string): Promise<boolean> {
    const read = await t.gql<{ conversation: { remember: boolean } }>(
      'query ($id: ID!) { conversation(id: $id) { remember } }',
      { id },
      user,
    );
    return read.data!.conversation.remember;
  }

  it('brings Max into Olivia’s conversation: the reply made for her alone reads as withheld to him', async () => {
    await oliviaPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    await oliviaPage.getByLabel('Title (optional)').fill('Sunday lunch');
    await oliviaPage.getByRole('button', { name: 'Start' }).click();
    await oliviaPage.getByRole('heading', { name: 'Sunday lunch' }).waitFor();
    conversationUrl = oliviaPage.url();
    await oliviaPage.getByLabel('Your message').fill('What did Grandpa cook?');
    await oliviaPage.getByRole('button', { name: 'Send' }).click();
    // Alone, the reply is simply the agent's.
    await turn(oliviaPage, ALONE_REPLY).getByText('Agent', { exact: false }).waitFor({
      timeout: 15_000,
    });

    await oliviaPage.getByLabel('Bring in a member').selectOption({ label: 'Max' });
    await oliviaPage.getByRole('button', { name: 'Add to the conversation' }).click();
    await oliviaPage.getByText('Max now takes part.').waitFor();
    const participants = oliviaPage.getByRole('list', { name: 'Participants' });
    await participants.getByText('Max', { exact: true }).waitFor();
    await participants.getByText('You', { exact: true }).waitFor();
    expect(await seriousViolations(oliviaPage)).toEqual([]);

    // Max finds it among his conversations, held with Olivia.
    await maxPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    const listed = maxPage.getByRole('listitem').filter({ hasText: 'Sunday lunch' });
    await listed.getByText('with Olivia', { exact: false }).waitFor();
    await listed.getByRole('link', { name: 'Sunday lunch' }).click();
    await maxPage.getByRole('heading', { name: 'Sunday lunch' }).waitFor();
    // Each turn names its author; the reply made for Olivia alone is withheld from Max.
    const question = turn(maxPage, 'What did Grandpa cook?');
    await question.getByText('Olivia', { exact: false }).first().waitFor();
    const withheld = turn(maxPage, 'written for another participant alone');
    await withheld.getByText('Agent, answering Olivia').waitFor();
    expect(await maxPage.getByText(ALONE_REPLY).count()).toBe(0);
    // Olivia still reads it whole.
    await turn(oliviaPage, ALONE_REPLY).getByText('Agent, answering you').waitFor();
    expect(await seriousViolations(maxPage)).toEqual([]);
  }, 120_000);

  it('shows each turn’s author live on both pages, and each participant’s own remember switch', async () => {
    const conversationId = conversationUrl.split('/').pop()!;
    // Max's switch starts off; Olivia's is hers.
    const maxSwitch = maxPage.getByRole('switch', {
      name: /Remember what I say in this conversation/,
    });
    expect(await maxSwitch.isChecked()).toBe(false);
    const oliviaBefore = await remembers(olivia, conversationId);
    await maxSwitch.click();
    await maxPage.getByText('Remember what I say in this conversation: on').waitFor();
    expect(await remembers(max, conversationId)).toBe(true);
    expect(await remembers(olivia, conversationId)).toBe(oliviaBefore);

    await maxPage.getByLabel('Your message').fill('He made a roast on Sundays.');
    await maxPage.getByRole('button', { name: 'Send' }).click();
    // Olivia's page shows Max's turn and the reply to him, without a reload.
    const said = turn(oliviaPage, 'He made a roast on Sundays.');
    await said.getByText('Max', { exact: false }).first().waitFor({ timeout: 15_000 });
    await turn(oliviaPage, ROAST_REPLY)
      .getByText('Agent, answering Max')
      .waitFor({ timeout: 15_000 });
    await turn(maxPage, ROAST_REPLY).getByText('Agent, answering you').waitFor();
    expect(oliviaPage.url()).toBe(conversationUrl);
  }, 60_000);

  it('starts a conversation with another member from the start, and lets a participant leave', async () => {
    await maxPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    await maxPage.getByLabel('Title (optional)').fill('Boat trips');
    await maxPage
      .getByRole('group', { name: /Talk together with/ })
      .getByLabel('Olivia')
      .check();
    await maxPage.getByRole('button', { name: 'Start' }).click();
    await maxPage.getByRole('heading', { name: 'Boat trips' }).waitFor();
    await maxPage
      .getByRole('list', { name: 'Participants' })
      .getByText('Olivia', { exact: true })
      .waitFor();
    await oliviaPage.goto(`${base}/app/legacies/${legacyId}/conversations`);
    await oliviaPage
      .getByRole('listitem')
      .filter({ hasText: 'Boat trips' })
      .getByText('with Max', { exact: false })
      .waitFor();

    // Max leaves Sunday lunch: he reads what was said until then, and can no longer write.
    await maxPage.goto(conversationUrl);
    await maxPage.getByRole('button', { name: 'Leave this conversation' }).click();
    await maxPage.getByText('You left this conversation.', { exact: true }).waitFor();
    // The page takes the conversation again: what it draws then comes from the API.
    await maxPage
      .getByText('you read what was said while you took part', { exact: false })
      .waitFor();
    expect(await maxPage.getByLabel('Your message').count()).toBe(0);
    await turn(maxPage, 'He made a roast on Sundays.').waitFor();
    // The starter has no Leave button (she deletes it instead), and sees that Max left.
    await oliviaPage.goto(conversationUrl);
    await oliviaPage
      .getByRole('list', { name: 'Participants' })
      .getByRole('listitem')
      .filter({ hasText: 'Max' })
      .getByText('left', { exact: false })
      .waitFor();
    expect(await oliviaPage.getByRole('button', { name: 'Leave this conversation' }).count()).toBe(
      0,
    );
    expect(await seriousViolations(maxPage)).toEqual([]);
  }, 60_000);

  it('works at phone width, and writes its screenshots', async () => {
    const list = `${base}/app/legacies/${legacyId}/conversations`;
    expect(await phoneProblems(oliviaContext, conversationUrl, ROAST_REPLY)).toEqual([]);
    expect(await phoneProblems(maxContext, conversationUrl, 'written for another')).toEqual([]);
    expect(await phoneProblems(oliviaContext, list, 'Talk together with')).toEqual([]);
    await screenshots(oliviaContext, conversationUrl, 'together', ROAST_REPLY);
    await screenshots(maxContext, conversationUrl, 'together-withheld', 'written for another');
  }, 90_000);

  it('raised no uncaught error in the pages', () => {
    expect(pageErrors).toEqual([]);
  });
});
