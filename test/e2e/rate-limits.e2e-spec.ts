import { Client } from 'graphql-ws';
import { JobDeferred } from '../../src/jobs/jobs.exception.js';
import { DataSource } from 'typeorm';
import {
  SUMMARIZE_JOB,
  SummariesService,
  SummarizeJobPayload,
} from '../../src/summaries/summaries.service.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, TestApp, TestUser } from '../support/test-app.js';

/** One operation over graphql-ws: its first result. */
function overWs(client: Client, query: string): Promise<GqlResponse<unknown>> {
  return new Promise((resolve) => {
    client.subscribe(
      { query },
      {
        next: (value) => resolve(value as GqlResponse<unknown>),
        error: (err) => resolve({ errors: err as GqlResponse<unknown>['errors'] }),
        complete: () => undefined,
      },
    );
  });
}

const codeOf = (res: GqlResponse<unknown>) => String(res.errors?.[0]?.extensions?.code ?? 'OK');

describe('Rate limits per user and per address, on HTTP and WebSocket', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      RATE_LIMIT_PER_MINUTE: '5',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3',
    });
  });
  afterAll(() => t.close());

  it('shares one budget per user between HTTP and WebSocket, with a retry-after', async () => {
    const ann = await t.user('limited-ann');
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) codes.push(codeOf(await t.gql('{ me { id } }', {}, ann)));
    const ws = t.ws(ann);
    for (let i = 0; i < 2; i++) codes.push(codeOf(await overWs(ws, '{ me { id } }')));
    expect(codes).toEqual(['OK', 'OK', 'OK', 'OK', 'OK']);

    const http = await t.gql('{ me { id } }', {}, ann);
    expect(http.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED' });
    const retryAfter = http.errors![0].extensions!.retryAfterSeconds as number;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(codeOf(await overWs(ws, '{ me { id } }'))).toBe('RATE_LIMITED');

    // Someone else's budget is their own.
    expect(codeOf(await t.gql('{ me { id } }', {}, await t.user('limited-bob')))).toBe('OK');
  });

  it('counts each aliased root field', async () => {
    const cas = await t.user('limited-cas');
    const aliases = Array.from({ length: 7 }, (_, i) => `m${i}: me { id }`).join(' ');
    const res = await t.gql(`{ ${aliases} }`, {}, cas);
    // Five took the budget and one of the other two was refused (root fields run at once, so
    // any alias may be the one; `me` being non-null, the request stops at the first refusal).
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(res.errors![0].path![0]).toMatch(/^m[0-6]$/);
    // Nothing is left for a next call: the aliases spent it all.
    expect(codeOf(await t.gql('{ me { id } }', {}, cas))).toBe('RATE_LIMITED');
  });

  it('limits calls without a valid token by address', async () => {
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) codes.push(codeOf(await t.gql('{ me { id } }', {}, null)));
    expect(codes).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED', 'UNAUTHENTICATED']);
    expect(codeOf(await t.gql('{ me { id } }', {}, null))).toBe('RATE_LIMITED');
    // A forged token spends the same budget.
    expect(codeOf(await t.gql('{ me { id } }', {}, 'not.a.token'))).toBe('RATE_LIMITED');
  });

  it('counts operations of meta fields only ({ __typename }, introspection) like any other', async () => {
    // Anonymously: the address's budget (3 a minute) runs out on them alone, on both transports.
    const codes: string[] = [];
    for (let i = 0; i < 4; i++) codes.push(codeOf(await t.gql('{ __typename }', {}, null)));
    expect(codes).toContain('RATE_LIMITED');
    const limited = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    });
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as GqlResponse<unknown>;
    expect(body.data ?? null).toBeNull();
    expect(body.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(body.errors![0].extensions!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(codeOf(await overWs(t.ws(null), '{ __typename }'))).toBe('RATE_LIMITED');
    expect(codeOf(await t.gql('query Q { ... on Query { __typename } }', {}, null))).toBe(
      'RATE_LIMITED',
    );

    // Signed in: the user's budget (5), shared with every other root field.
    const dee = await t.user('limited-dee');
    const ws = t.ws(dee);
    const signedIn: string[] = [];
    for (let i = 0; i < 3; i++) signedIn.push(codeOf(await t.gql('{ __typename }', {}, dee)));
    for (let i = 0; i < 2; i++) signedIn.push(codeOf(await overWs(ws, '{ __typename }')));
    expect(signedIn).toEqual(['OK', 'OK', 'OK', 'OK', 'OK']);
    expect(codeOf(await t.gql('{ me { id } }', {}, dee))).toBe('RATE_LIMITED');
    // A bad token is refused as it is for any field.
    expect(codeOf(await t.gql('{ __typename }', {}, 'not.a.token'))).toMatch(
      /UNAUTHENTICATED|RATE_LIMITED/,
    );
  });
});

describe('The model-call budget', () => {
  let t: TestApp;
  let user: TestUser;
  let conversationId: string;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'on',
      MODEL_CALLS_PER_USER_PER_MINUTE: '2',
    });
    user = await t.user('budget-user');
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Ada" }) { id } }',
      {},
      user,
    );
    conversationId = (
      await t.gql<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacy.data!.createLegacy.id },
        user,
      )
    ).data!.startConversation.id;
  });
  afterAll(() => t.close());

  const send = (content: string) =>
    t.gql(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
      { i: { conversationId, content } },
      user,
    );
  const turns = async () =>
    (
      await t.gql<{ conversation: { messageCount: number } }>(
        'query($c: ID!) { conversation(id: $c) { messageCount } }',
        { c: conversationId },
        user,
      )
    ).data!.conversation.messageCount;

  it('refuses replies and summaries beyond it, storing nothing, and defers the background', async () => {
    expect(codeOf(await send('She kept bees.'))).toBe('OK');
    expect(codeOf(await send('He fixed clocks.'))).toBe('OK');
    const stored = await turns();

    const refused = await send('And a third.');
    expect(refused.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.errors![0].extensions!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await turns()).toBe(stored);

    const summary = await t.gql(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { deferred } }',
      { c: conversationId },
      user,
    );
    expect(codeOf(summary)).toBe('RATE_LIMITED');

    // The summarization job waits for the budget instead of failing or dropping the range.
    await expect(
      t.app.get(SummariesService).runJob({ conversationId, force: true }),
    ).rejects.toBeInstanceOf(JobDeferred);
  });

  it("counts another participant's summarizeNow in their own budget, telling nothing of the starter's", async () => {
    const other = await t.user('budget-other', { email: 'other@budget.example.com' });
    const legacyId = (
      await t.gql<{ conversation: { legacyId: string } }>(
        'query($c: ID!) { conversation(id: $c) { legacyId } }',
        { c: conversationId },
        user,
      )
    ).data!.conversation.legacyId;
    await joinLegacy(t, user, legacyId, other);
    const otherId = (await t.gql<{ me: { id: string } }>('{ me { id } }', {}, other)).data!.me.id;
    const added = await t.gql(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId, userId: otherId } },
      user,
    );
    expect(added.errors).toBeUndefined();
    // The starter's budget is spent (above); the other participant's is whole.
    const summary = await t.gql<{
      summarizeNow: { deferred: boolean; chunks: { id: string }[] };
    }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { deferred chunks { id } } }',
      { c: conversationId },
      other,
    );
    expect(summary.errors).toBeUndefined();
    expect(summary.data!.summarizeNow.deferred).toBe(false);
    expect(summary.data!.summarizeNow.chunks.length).toBeGreaterThan(0);
  });
});

describe("The rest of a participant's summarizeNow", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      MODEL_CALLS_PER_USER_PER_MINUTE: '2',
      SUMMARIZATION_BATCH: '2',
    });
  });
  afterAll(() => t.close());

  it('is charged to that participant in the background too, never to the starter', async () => {
    const starter = await t.user('rest-starter', { email: 'starter@rest.example.com' });
    const other = await t.user('rest-other', { email: 'other@rest.example.com' });
    const legacyId = (
      await t.gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Ida" }) { id } }',
        {},
        starter,
      )
    ).data!.createLegacy.id;
    const at = (i: number) => new Date(Date.UTC(2024, 0, 1, 10, i)).toISOString();
    const imported = await t.gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($i: ImportConversationInput!) { importConversation(input: $i) { conversation { id } } }`,
      {
        i: {
          legacyId,
          messages: Array.from({ length: 10 }, (_, i) => ({
            role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
            content: `Ida kept hens, tale number ${i}.`,
            occurredAt: at(i),
          })),
        },
      },
      starter,
    );
    expect(imported.errors).toBeUndefined();
    const conversationId = imported.data!.importConversation.conversation.id;
    await joinLegacy(t, starter, legacyId, other);
    const otherId = (await t.gql<{ me: { id: string } }>('{ me { id } }', {}, other)).data!.me.id;
    const added = await t.gql(
      'mutation($i: AddConversationParticipantInput!) { addConversationParticipant(input: $i) { id } }',
      { i: { conversationId, userId: otherId } },
      starter,
    );
    expect(added.errors).toBeUndefined();

    // Two batches inline take the other participant's two calls; the rest goes to a job.
    const asked = await t.gql<{
      summarizeNow: { deferred: boolean; unsummarizedTurns: number; chunks: { id: string }[] };
    }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { deferred unsummarizedTurns chunks { id } } }',
      { c: conversationId },
      other,
    );
    expect(asked.errors).toBeUndefined();
    expect(asked.data!.summarizeNow.chunks).toHaveLength(2);
    expect(asked.data!.summarizeNow.unsummarizedTurns).toBe(6);
    const [job] = await t.app
      .get(DataSource)
      .query<{ payload: SummarizeJobPayload }[]>(
        `SELECT payload FROM jobs WHERE type = $1 AND key = $2 AND status = 'PENDING'`,
        [SUMMARIZE_JOB, `${conversationId}:now:${otherId}`],
      );
    expect(job.payload).toEqual({ conversationId, force: true, chargedTo: otherId });

    // Their budget is spent: the job waits for it, though the starter's is whole.
    await expect(t.app.get(SummariesService).runJob(job.payload)).rejects.toBeInstanceOf(
      JobDeferred,
    );
    const own = await t.gql<{ summarizeNow: { chunks: { id: string }[] } }>(
      'mutation($c: ID!) { summarizeNow(conversationId: $c) { chunks { id } } }',
      { c: conversationId },
      starter,
    );
    expect(own.errors).toBeUndefined();
    expect(own.data!.summarizeNow.chunks).toHaveLength(2);
    // The rest of the starter's pass is a job of the starter's, not folded into the other's.
    const starterId = (await t.gql<{ me: { id: string } }>('{ me { id } }', {}, starter)).data!.me
      .id;
    const waiting = await t.app
      .get(DataSource)
      .query<{ payload: SummarizeJobPayload }[]>(
        `SELECT payload FROM jobs WHERE type = $1 AND status = 'PENDING' AND payload ? 'force'`,
        [SUMMARIZE_JOB],
      );
    expect(waiting.map((j) => j.payload.chargedTo).sort()).toEqual([otherId, starterId].sort());
  });
});
