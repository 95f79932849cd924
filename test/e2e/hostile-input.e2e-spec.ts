import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * What an outside attack on the landed code found (2026-11-28), each closed: a ranking that
 * reached -Infinity and failed a whole answer, names that forged lines in a shared conversation,
 * and other members' words given to the model as if they were ours.
 */
describe('findings of an outside attack', () => {
  let t: TestApp;
  let olga: TestUser;
  let mia: TestUser;
  let miaId: string;
  let legacyId: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, who: TestUser) => {
    const res = await t.gql<T>(query, variables, who);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const send = (who: TestUser, conversationId: string, content: string) =>
    ok(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
      {
        i: { conversationId, content },
      },
      who,
    );
  const start = async (who: TestUser, participantIds: string[] = []) =>
    (
      await ok<{ startConversation: { id: string } }>(
        'mutation($i: StartConversationInput!) { startConversation(input: $i) { id } }',
        { i: { legacyId, participantIds } },
        who,
      )
    ).startConversation.id;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    olga = await t.user('attack-olga', { email: 'olga@attack.example.com', name: 'Olga' });
    mia = await t.user('attack-mia', { email: 'mia@attack.example.com', name: 'Mia' });
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Ivo" }) { id } }',
        {},
        olga,
      )
    ).createLegacy.id;
    await joinLegacy(t, olga, legacyId, mia);
    miaId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, mia)).me.id;
  });
  afterAll(() => t?.close());

  it('keeps every score of retrievalDebug a number in a together conversation another member started', async () => {
    // Mia's own conversation holds fewer turns than Olga's together conversation, and more of
    // them name the greenhouse: counting the together conversation out of Mia's own (which it
    // never was in) made the wider scope -1 turns, a word's idf log(0) and its rank -Infinity.
    const own = await start(mia);
    await send(mia, own, 'The greenhouse tomatoes were the best in the village.');
    await send(mia, own, 'Grandpa Ivo built the greenhouse from old windows.');
    await send(mia, own, 'In the greenhouse he kept a chair and a radio.');
    await send(mia, own, 'The greenhouse smelled of soil and rain.');
    const together = await start(olga, [miaId]);
    await send(olga, together, 'We planted beans by the fence today.');
    await send(mia, together, 'The greenhouse roof leaked again last winter.');
    await send(olga, together, 'Grandpa Ivo loved his old radio.');
    await send(mia, together, 'He sang while he worked.');
    await send(olga, together, 'He never missed the news at seven.');
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });

    const res: GqlResponse<{
      retrievalDebug: {
        widened: boolean;
        candidates: { score: number; paths: { path: string; raw: number | null }[] }[];
      };
    }> = await t.gql(
      `query($c: ID!, $q: String!) { retrievalDebug(conversationId: $c, query: $q) {
         widened candidates { score paths { path score raw } scores { name value } } } }`,
      { c: together, q: 'greenhouse' },
      mia,
    );
    expect(res.errors).toBeUndefined();
    const debug = res.data!.retrievalDebug;
    expect(debug.widened).toBe(true);
    const lexical = debug.candidates.flatMap((c) => c.paths.filter((p) => p.path === 'LEXICAL'));
    expect(lexical.length).toBeGreaterThan(0);
    for (const hit of lexical) expect(Number.isFinite(hit.raw)).toBe(true);
  });
});
