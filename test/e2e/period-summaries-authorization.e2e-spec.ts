import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * Period summaries are their member's own. For every period-summary operation: anonymous
 * callers are refused, an outsider is told the legacy does not exist, another member of the
 * same legacy only ever reaches their own summaries (NOT_FOUND for the author's ids, empty
 * lists, nothing of the author's in recall, context or events), and nothing of the author's
 * changes.
 */
type Caller = 'anonymous' | 'outsider' | 'other member';

interface Fixture {
  legacyId: string;
  conversationId: string;
  weekId: string;
  monthId: string;
  backfillId: string;
}

interface Row {
  authorizes: string;
  caller: Caller;
  code: 'UNAUTHENTICATED' | 'NOT_FOUND' | 'OK';
  op: (f: Fixture) => { query: string; variables?: Record<string, unknown> };
}

const SECRET = 'rhubarb crumble';

const LIST = (f: Fixture) => ({
  query:
    'query($l: ID!) { periodSummaries(legacyId: $l) { nodes { id summary keyThemes } pageInfo { hasNextPage } } }',
  variables: { l: f.legacyId },
});
const ONE = (id: string) => ({
  query: 'query($id: ID!) { periodSummary(id: $id) { id summary } }',
  variables: { id },
});
const PROGRESS = (f: Fixture) => ({
  query: 'query($id: ID!) { periodSummaryProgress(id: $id) { id total } }',
  variables: { id: f.backfillId },
});
const COMPARE = (f: Fixture) => ({
  query: `query($l: ID!) { compareYears(legacyId: $l, year: 2025, otherYear: 2024) {
    text newThemes current { summaries { id summary } } } }`,
  variables: { l: f.legacyId },
});
const SUMMARIZE = (f: Fixture) => ({
  query: `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: MONTH, start: "2025-10-01" }) {
    outcome periodSummary { id summary } } }`,
  variables: { l: f.legacyId },
});
const BACKFILL = (f: Fixture) => ({
  query: `mutation($l: ID!) { backfillPeriodSummaries(input: { legacyId: $l, from: "2025-10-01", to: "2025-10-31" }) {
    id total } }`,
  variables: { l: f.legacyId },
});
const DELETE = (id: string) => ({
  query: 'mutation($id: ID!) { deletePeriodSummary(id: $id) }',
  variables: { id },
});
const RECALL = (f: Fixture) => ({
  query:
    'query($l: ID!) { recall(legacyId: $l, query: "What did we talk about in October?") { edges { node { sourceType sourceId text } } } }',
  variables: { l: f.legacyId },
});
const FORGET = (id: string) => ({
  query: 'mutation($id: ID!) { forgetRecallItem(id: $id) { recallItemId forgotten } }',
  variables: { id: `PERIOD_SUMMARY:${id}` },
});

const table: Row[] = [
  { authorizes: 'periodSummaries', caller: 'anonymous', code: 'UNAUTHENTICATED', op: LIST },
  { authorizes: 'periodSummaries', caller: 'outsider', code: 'NOT_FOUND', op: LIST },
  { authorizes: 'periodSummaries', caller: 'other member', code: 'OK', op: LIST },
  {
    authorizes: 'periodSummary',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => ONE(f.weekId),
  },
  { authorizes: 'periodSummary', caller: 'outsider', code: 'NOT_FOUND', op: (f) => ONE(f.weekId) },
  {
    authorizes: 'periodSummary',
    caller: 'other member',
    code: 'NOT_FOUND',
    op: (f) => ONE(f.monthId),
  },
  {
    authorizes: 'periodSummaryProgress',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: PROGRESS,
  },
  { authorizes: 'periodSummaryProgress', caller: 'outsider', code: 'NOT_FOUND', op: PROGRESS },
  { authorizes: 'periodSummaryProgress', caller: 'other member', code: 'NOT_FOUND', op: PROGRESS },
  { authorizes: 'compareYears', caller: 'anonymous', code: 'UNAUTHENTICATED', op: COMPARE },
  { authorizes: 'compareYears', caller: 'outsider', code: 'NOT_FOUND', op: COMPARE },
  { authorizes: 'compareYears', caller: 'other member', code: 'OK', op: COMPARE },
  { authorizes: 'summarizePeriod', caller: 'anonymous', code: 'UNAUTHENTICATED', op: SUMMARIZE },
  { authorizes: 'summarizePeriod', caller: 'outsider', code: 'NOT_FOUND', op: SUMMARIZE },
  // The other member's own October: they have no conversation, so nothing is stored.
  { authorizes: 'summarizePeriod', caller: 'other member', code: 'OK', op: SUMMARIZE },
  {
    authorizes: 'backfillPeriodSummaries',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: BACKFILL,
  },
  { authorizes: 'backfillPeriodSummaries', caller: 'outsider', code: 'NOT_FOUND', op: BACKFILL },
  { authorizes: 'backfillPeriodSummaries', caller: 'other member', code: 'OK', op: BACKFILL },
  {
    authorizes: 'deletePeriodSummary',
    caller: 'anonymous',
    code: 'UNAUTHENTICATED',
    op: (f) => DELETE(f.weekId),
  },
  {
    authorizes: 'deletePeriodSummary',
    caller: 'outsider',
    code: 'NOT_FOUND',
    op: (f) => DELETE(f.weekId),
  },
  {
    authorizes: 'deletePeriodSummary',
    caller: 'other member',
    code: 'NOT_FOUND',
    op: (f) => DELETE(f.monthId),
  },
  // Recall and forgetting reach period summaries too: never another member's.
  { authorizes: 'recall', caller: 'other member', code: 'OK', op: RECALL },
  {
    authorizes: 'forgetRecallItem',
    caller: 'other member',
    code: 'NOT_FOUND',
    op: (f) => FORGET(f.monthId),
  },
];

describe('period summaries authorization', () => {
  let t: TestApp;
  let ds: DataSource;
  let jobs: JobsService;
  let author: TestUser;
  let other: TestUser;
  let outsider: TestUser;
  let f: Fixture;

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const authorRows = () =>
    ds.query(
      `SELECT p.id, p.summary, p.updated_at, p.deleted_at FROM period_summaries p
         JOIN users u ON u.id = p.user_id WHERE u.subject = $1 ORDER BY p.id`,
      [author.sub],
    );
  const callerOf = (c: Caller) => (c === 'anonymous' ? null : c === 'outsider' ? outsider : other);

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    jobs = t.app.get(JobsService);
    author = await t.user('periods-authz-author', { email: 'author@periods-authz.example.com' });
    other = await t.user('periods-authz-other', { email: 'other@periods-authz.example.com' });
    outsider = await t.user('periods-authz-outsider', { email: 'out@periods-authz.example.com' });
    const legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Aunt May" }) { id } }',
        {},
        author,
      )
    ).createLegacy.id;
    await joinLegacy(t, author, legacyId, other);
    const imported = await ok<{ importConversation: { conversation: { id: string } } }>(
      `mutation($input: ImportConversationInput!) {
         importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId,
          messages: [
            {
              role: 'USER',
              occurredAt: '2025-10-07T18:00:00Z',
              content: `Aunt May baked a ${SECRET} every Sunday and we loved it.`,
            },
            {
              role: 'USER',
              occurredAt: '2025-10-08T18:00:00Z',
              content: `The ${SECRET} recipe is still in her tin box.`,
            },
          ],
        },
      },
      author,
    );
    await jobs.drain();
    const summarize = (period: string, start: string) =>
      ok<{ summarizePeriod: { periodSummary: { id: string } } }>(
        `mutation($l: ID!, $p: SummaryPeriod!, $s: String!) {
           summarizePeriod(input: { legacyId: $l, period: $p, start: $s }) { periodSummary { id } } }`,
        { l: legacyId, p: period, s: start },
        author,
      );
    const week = await summarize('WEEK', '2025-10-06');
    const month = await summarize('MONTH', '2025-10-01');
    const backfill = await ok<{ backfillPeriodSummaries: { id: string } }>(
      BACKFILL({ legacyId } as Fixture).query,
      { l: legacyId },
      author,
    );
    await jobs.drain();
    f = {
      legacyId,
      conversationId: imported.importConversation.conversation.id,
      weekId: week.summarizePeriod.periodSummary.id,
      monthId: month.summarizePeriod.periodSummary.id,
      backfillId: backfill.backfillPeriodSummaries.id,
    };
  });
  afterAll(() => t?.close());

  it('stores the author’s summaries with what they said', async () => {
    const list = await ok<{ periodSummaries: { nodes: { id: string; summary: string }[] } }>(
      LIST(f).query,
      LIST(f).variables,
      author,
    );
    // The week and month asked for, and the year the backfill added.
    expect(list.periodSummaries.nodes).toHaveLength(3);
    expect(list.periodSummaries.nodes.map((n) => n.id)).toEqual(
      expect.arrayContaining([f.weekId, f.monthId]),
    );
    expect(JSON.stringify(list)).toContain(SECRET);
  });

  it.each(table)('$authorizes as $caller: $code', async ({ caller, code, op }) => {
    const before = await authorRows();
    const { query, variables } = op(f);
    const res: GqlResponse = await t.gql(query, variables, callerOf(caller));
    if (code === 'OK') {
      expect(res.errors).toBeUndefined();
    } else {
      expect(res.errors![0].extensions).toMatchObject({ code });
      expect(res.data ?? null).toBeNull();
    }
    await jobs.drain();
    const text = JSON.stringify(res);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(f.weekId);
    expect(text).not.toContain(f.monthId);
    expect(await authorRows()).toEqual(before);
  });

  it('answers another member’s summary id exactly like an unknown one', async () => {
    const theirs = await t.gql(ONE(f.monthId).query, ONE(f.monthId).variables, other);
    const unknown = await t.gql(
      ONE(f.monthId).query,
      { id: '00000000-0000-4000-8000-000000000000' },
      other,
    );
    expect(theirs).toEqual(unknown);
  });

  it('keeps the author’s summaries out of another member’s context', async () => {
    const conversation = await ok<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: f.legacyId },
      other,
    );
    const context = await ok<{ context: { system: string; items: { sourceId: string }[] } }>(
      'query($c: ID!) { context(conversationId: $c, query: "What did we talk about in October 2025?") { system items { sourceId } } }',
      { c: conversation.startConversation.id },
      other,
    );
    expect(JSON.stringify(context)).not.toContain(SECRET);
    expect(context.context.items.map((i) => i.sourceId)).not.toContain(f.monthId);
  });

  const SUBSCRIPTION = `subscription($l: ID!) { periodSummaryAdded(legacyId: $l) { id period summary } }`;

  it.each([
    { authorizes: 'periodSummaryAdded', caller: 'anonymous' as Caller, code: 'UNAUTHENTICATED' },
    { authorizes: 'periodSummaryAdded', caller: 'outsider' as Caller, code: 'NOT_FOUND' },
  ])('$authorizes as $caller: $code', async ({ caller, code }) => {
    const refused = subscribe(t.ws(callerOf(caller)), SUBSCRIPTION, { l: f.legacyId });
    await refused.waitFor(1);
    expect(refused.events[0].errors![0].extensions).toMatchObject({ code });
    expect(refused.events[0].data ?? null).toBeNull();
  });

  it('periodSummaryAdded as other member: OK, and only their own summaries arrive', async () => {
    const others = subscribe(t.ws(other), SUBSCRIPTION, { l: f.legacyId });
    const authors = subscribe<{ periodSummaryAdded: { id: string; period: string } }>(
      t.ws(author),
      SUBSCRIPTION,
      { l: f.legacyId },
    );
    await Promise.all([others.ready, authors.ready]);
    await ok(SUMMARIZE(f).query, SUMMARIZE(f).variables, author);
    await authors.waitFor(1);
    expect(authors.events[0].data!.periodSummaryAdded).toEqual({
      id: f.monthId,
      period: 'MONTH',
      summary: expect.stringContaining('Aunt May'),
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(others.events).toEqual([]);
  });
});
