import { JobsService } from '../../src/jobs/jobs.service.js';
import {
  detectTask,
  FakeOpenAiServer,
  FakeRequest,
} from '../support/fake-openai/fake-openai.server.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * What the language model is sent, read at an OpenAI-compatible endpoint: the profile reaches
 * the reply's prompt only with consent, and never the extraction of memories or facts, nor the
 * summaries, whatever the consent.
 */
const MARK = { name: 'Wrenfeather', interest: 'bellringing in Oxmoor' };

describe('profile in model calls', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let user: TestUser;
  let conversationId: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>) => {
    const res = await t.gql<T>(query, variables, user);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const send = (content: string) =>
    ok(
      'mutation($c: ID!, $m: String!) { sendMessage(input: { conversationId: $c, content: $m }) { reply { id } } }',
      {
        c: conversationId,
        m: content,
      },
    );
  const text = (r: FakeRequest) => JSON.stringify(r.body.messages ?? []);
  const mentions = (r: FakeRequest) => Object.values(MARK).some((m) => text(r).includes(m));
  /** Replies stream; extraction and summaries ask for JSON or plain text without streaming. */
  const replies = () => fake.requestsFor('chat').filter((r) => r.body.stream === true);
  const others = () => fake.requestsFor('chat').filter((r) => r.body.stream !== true);

  beforeAll(async () => {
    fake = await FakeOpenAiServer.start();
    t = await startTestApp({
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-chat',
      MODEL_MAX_RETRIES: '1',
      MODEL_RETRY_BASE_MS: '1',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      // Summaries, and the facts read with them, after two turns.
      SUMMARIZATION_THRESHOLD: '1',
      SUMMARIZATION_BATCH: '2',
    });
    user = await t.user('profile-calls', { email: 'calls@profile.example.com' });
    const legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandma Ines" }) { id } }',
        {},
      )
    ).createLegacy.id;
    conversationId = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l, remember: true }) { id } }',
        { l: legacyId },
      )
    ).startConversation.id;
    await ok(
      `mutation { updateProfile(input: { preferredName: "${MARK.name}", interests: ["${MARK.interest}"] }) { consent } }`,
      {},
    );
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('without consent, no call carries the profile', async () => {
    await send('What are my interests? I grew up near the sea.');
    await t.app.get(JobsService).drain();
    expect(replies()).toHaveLength(1);
    expect(fake.requestsFor('chat').filter(mentions)).toEqual([]);
  });

  it('with consent, the reply is given the profile; extraction and summaries still are not', async () => {
    await ok('mutation { setProfileConsent(consent: true) { consent } }', {});
    await send('What are my interests? My sister visits on Sundays.');
    await t.app.get(JobsService).drain();
    expect(replies()).toHaveLength(1);
    const system = replies()[0].body.messages![0].content!;
    expect(system).toContain(MARK.name);
    expect(system).toContain(MARK.interest);
    // The background work did call the model (memories; summaries with their facts), never
    // with the profile.
    expect(new Set(others().map((r) => detectTask(r.body)))).toEqual(
      new Set(['extractMemories', 'summarizeTurns']),
    );
    expect(others().filter(mentions)).toEqual([]);
  });

  it('after consent is revoked, the reply is not given the profile any more', async () => {
    await ok('mutation { setProfileConsent(consent: false) { consent } }', {});
    await send('What are my interests now?');
    await t.app.get(JobsService).drain();
    expect(replies()).toHaveLength(1);
    expect(fake.requestsFor('chat').filter(mentions)).toEqual([]);
  });
});
