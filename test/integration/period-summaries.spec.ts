import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { LANGUAGE_MODEL } from '../../src/llm/language-model.js';
import type { LanguageModel } from '../../src/llm/language-model.js';
import { RateLimitService } from '../../src/rate-limit/rate-limit.service.js';
import { PeriodSchedulerService } from '../../src/periods/period-scheduler.service.js';
import { PERIOD_JOB } from '../../src/periods/period-summary-builder.service.js';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * Period summaries on a controllable clock: a member in Pacific/Auckland and one in
 * America/Los_Angeles talk across a week boundary, a month boundary and the day Los Angeles
 * leaves daylight saving (2 November 2025). The scheduler is ticked at chosen instants; each
 * member must get exactly their own periods, once, with the right turns.
 */
describe('period summaries', () => {
  let t: TestApp;
  let ds: DataSource;
  let jobs: JobsService;
  let scheduler: PeriodSchedulerService;
  let kiwi: TestUser;
  let angeleno: TestUser;
  /** Also in Auckland: talks across its change to daylight time and a month's end. */
  let spring: TestUser;
  let legacyId: string;
  const conversations: Record<string, string> = {};

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };

  async function importTurns(
    as: TestUser,
    title: string,
    instants: string[],
    said?: string,
  ): Promise<string> {
    const data = await ok<{ importConversation: { conversation: { id: string } } }>(
      `mutation($input: ImportConversationInput!) {
         importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId,
          title,
          messages: instants.map((occurredAt, i) => ({
            role: 'USER',
            occurredAt,
            content:
              said ??
              `${title} turn ${i}: we talked about Grandpa's garden in Napier and how much we miss his tomatoes.`,
          })),
        },
      },
      as,
    );
    return data.importConversation.conversation.id;
  }

  interface Row {
    id: string;
    user_id: string;
    period: string;
    start: string;
    turn_count: number;
    conversation_count: number;
    source_period_ids: string[];
    source_chunk_ids: string[];
    updated_at: Date;
    stale: boolean;
    deleted_at: Date | null;
    summary: string;
    aggregated: boolean;
    conversation_ids: string[];
  }

  const rows = (who: TestUser) =>
    ds.query<Row[]>(
      `SELECT p.*, to_char(p.period_start, 'YYYY-MM-DD') AS start FROM period_summaries p
         JOIN users u ON u.id = p.user_id WHERE u.subject = $1 ORDER BY period, period_start`,
      [who.sub],
    );
  const keysOf = async (who: TestUser) =>
    (await rows(who))
      .filter((r) => !r.deleted_at)
      .map((r) => `${r.period} ${r.start} ${r.turn_count}`);
  const jobKeys = async () =>
    (
      await ds.query<{ key: string }[]>(`SELECT key FROM jobs WHERE type = $1 ORDER BY key`, [
        PERIOD_JOB,
      ])
    ).map((r) => r.key);

  async function tick(at: string): Promise<number> {
    const queued = await scheduler.tick(new Date(at));
    await jobs.drain();
    return queued;
  }

  beforeAll(async () => {
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
    });
    ds = t.app.get(DataSource);
    jobs = t.app.get(JobsService);
    scheduler = t.app.get(PeriodSchedulerService);
    kiwi = await t.user('periods-kiwi', { email: 'kiwi@periods.example.com' });
    angeleno = await t.user('periods-la', { email: 'la@periods.example.com' });
    spring = await t.user('periods-spring', { email: 'spring@periods.example.com' });
    await ok('mutation { updateMe(input: { timezone: "Pacific/Auckland" }) { id } }', {}, kiwi);
    await ok('mutation { updateMe(input: { timezone: "Pacific/Auckland" }) { id } }', {}, spring);
    await ok(
      'mutation { updateMe(input: { timezone: "America/Los_Angeles" }) { id } }',
      {},
      angeleno,
    );
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
        {},
        kiwi,
      )
    ).createLegacy.id;
    await joinLegacy(t, kiwi, legacyId, angeleno);
    await joinLegacy(t, kiwi, legacyId, spring);
    // Both joined in September: the scheduler starts at the periods they joined in.
    await ds.query(
      `UPDATE legacy_members SET joined_at = '2025-09-20T12:00:00Z' WHERE legacy_id = $1`,
      [legacyId],
    );
    // Auckland (daylight time, UTC+13): Sunday 2 November 23:30 and Monday 3 November 00:30.
    conversations.kiwi = await importTurns(kiwi, 'Kiwi', [
      '2025-11-02T10:30:00Z',
      '2025-11-02T11:30:00Z',
    ]);
    // Los Angeles: Friday 31 October 23:30 PDT, Sunday 2 November 23:30 PST (after the change
    // back to standard time that day), Monday 3 November 00:30 PST.
    conversations.la = await importTurns(angeleno, 'LA', [
      '2025-11-01T06:30:00Z',
      '2025-11-03T07:30:00Z',
      '2025-11-03T08:30:00Z',
    ]);
    // Auckland: Saturday 27 September 23:30 (standard time, UTC+12) and Sunday 28 September
    // 23:30 (daylight time from 02:00 that day, UTC+13): one week. Then Tuesday 30 September
    // 23:30 and Wednesday 1 October 00:30: one week, two months, one UTC date.
    conversations.spring = await importTurns(spring, 'Spring', [
      '2025-09-27T11:30:00Z',
      '2025-09-28T10:30:00Z',
      '2025-09-30T10:30:00Z',
    ]);
    conversations.springX = await importTurns(
      spring,
      'Spring X',
      ['2025-09-30T11:30:00Z'],
      'The lighthouse keeper had a parrot that sang every single morning.',
    );
    await jobs.drain();
  });

  afterAll(() => t?.close());
  afterEach(() => jest.restoreAllMocks());

  it('summarizes each member’s weeks and months in their own time zone, once', async () => {
    // Auckland's Monday begins at 11:00 UTC: before it, no week with a turn is due anywhere.
    await tick('2025-11-02T10:59:00Z');
    expect(await keysOf(kiwi)).toEqual([]);
    expect(await keysOf(angeleno)).toEqual([]);
    // Across the change to daylight time, and a month's end within a week.
    expect(await keysOf(spring)).toEqual([
      'MONTH 2025-09-01 3',
      'WEEK 2025-09-22 2',
      'WEEK 2025-09-29 2',
    ]);

    await tick('2025-11-02T11:00:00Z');
    // The week of 27 October to 2 November holds one of the kiwi's turns; October none.
    expect(await keysOf(kiwi)).toEqual(['WEEK 2025-10-27 1']);
    expect(await keysOf(spring)).toEqual([
      'MONTH 2025-09-01 3',
      'MONTH 2025-10-01 1',
      'WEEK 2025-09-22 2',
      'WEEK 2025-09-29 2',
    ]);
    expect(await keysOf(angeleno)).toEqual([]);

    // Los Angeles' Monday begins at 08:00 UTC (standard time again).
    await tick('2025-11-03T07:59:00Z');
    expect(await keysOf(angeleno)).toEqual([]);
    await tick('2025-11-03T08:00:00Z');
    // Its week holds the Friday and the Sunday turn; October only the Friday one, and
    // October is due now (its last week has ended), built from that week.
    expect(await keysOf(angeleno)).toEqual(['MONTH 2025-10-01 1', 'WEEK 2025-10-27 2']);
    const [october, week] = await rows(angeleno);
    expect(october.source_period_ids).toEqual([week.id]);

    await tick('2025-11-10T12:00:00Z');
    expect(await keysOf(kiwi)).toEqual(['WEEK 2025-10-27 1', 'WEEK 2025-11-03 1']);
    expect(await keysOf(angeleno)).toEqual([
      'MONTH 2025-10-01 1',
      'WEEK 2025-10-27 2',
      'WEEK 2025-11-03 1',
    ]);

    // November 2025 ends on a Sunday: due on Monday 1 December.
    await tick('2025-12-01T12:00:00Z');
    expect(await keysOf(kiwi)).toEqual([
      'MONTH 2025-11-01 2',
      'WEEK 2025-10-27 1',
      'WEEK 2025-11-03 1',
    ]);
    expect(await keysOf(angeleno)).toEqual([
      'MONTH 2025-10-01 1',
      'MONTH 2025-11-01 2',
      'WEEK 2025-10-27 2',
      'WEEK 2025-11-03 1',
    ]);
    const kiwiNovember = (await rows(kiwi)).find((r) => r.period === 'MONTH')!;
    // Built from both weeks (the first counts by its one day in November), offline.
    expect(kiwiNovember.source_period_ids).toHaveLength(2);
    expect(kiwiNovember.aggregated).toBe(true);
    expect(kiwiNovember.summary).toContain('1 conversation about Grandpa Joe, 2 turns');

    // Every period was queued once, whatever the number of ticks.
    const keys = await jobKeys();
    expect(new Set(keys).size).toBe(keys.length);
    // Ticking again at the same time queues nothing.
    expect(await scheduler.tick(new Date('2025-12-01T12:00:00Z'))).toBe(0);
  });

  it('picks up after a tick cut short, neither skipping nor repeating a period', async () => {
    const before = await jobKeys();
    // A crash in the middle of a member: its transaction rolls back, cursor and jobs together.
    const enqueue = jobs.enqueue.bind(jobs);
    let calls = 0;
    jest.spyOn(jobs, 'enqueue').mockImplementation(async (...args) => {
      if (++calls === 3) throw new Error('killed mid-tick');
      return enqueue(...args);
    });
    await expect(scheduler.tick(new Date('2025-12-15T12:00:00Z'))).rejects.toThrow('killed');
    jest.restoreAllMocks();
    // The next tick (after a restart) is cut short by its budget, then the one after finishes.
    await scheduler.tick(new Date('2025-12-15T12:00:00Z'), 1);
    await scheduler.tick(new Date('2025-12-15T12:00:00Z'));
    await jobs.drain();
    const after = await jobKeys();
    expect(new Set(after).size).toBe(after.length);
    const added = after.filter((k) => !before.includes(k));
    // Weeks of 1 and 8 December for the three members, nothing else.
    expect(added.map((k) => k.split(':').slice(2).join(' ')).sort()).toEqual([
      'WEEK 2025-12-01',
      'WEEK 2025-12-01',
      'WEEK 2025-12-01',
      'WEEK 2025-12-08',
      'WEEK 2025-12-08',
      'WEEK 2025-12-08',
    ]);
  });

  it('rebuilds nothing when run twice with nothing new', async () => {
    const before = await rows(kiwi);
    const [user] = await ds.query<{ id: string }[]>(`SELECT id FROM users WHERE subject = $1`, [
      kiwi.sub,
    ]);
    for (let i = 0; i < 2; i++) {
      await jobs.runHandler(PERIOD_JOB, {
        userId: user.id,
        legacyId,
        period: 'MONTH',
        start: '2025-11-01',
      });
    }
    expect(await rows(kiwi)).toEqual(before);
  });

  it('is not touched by clearAllMemories', async () => {
    const before = await rows(kiwi);
    await ok('mutation { clearAllMemories(confirm: "DELETE ALL MY MEMORIES") }', {}, kiwi);
    await jobs.drain();
    expect(await rows(kiwi)).toEqual(before);
  });

  it('lists, reads and compares through GraphQL, for the member only', async () => {
    const list = await ok<{
      periodSummaries: { nodes: { id: string; period: string; start: string; end: string }[] };
    }>(
      'query($l: ID!) { periodSummaries(legacyId: $l, period: MONTH) { nodes { id period start end } } }',
      { l: legacyId },
      angeleno,
    );
    expect(list.periodSummaries.nodes.map((n) => `${n.start}..${n.end}`)).toEqual([
      '2025-11-01..2025-11-30',
      '2025-10-01..2025-10-31',
    ]);
    const other = await t.gql(
      'query($id: ID!) { periodSummary(id: $id) { id } }',
      { id: list.periodSummaries.nodes[0].id },
      kiwi,
    );
    expect(other.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });

    const compared = await ok<{
      compareYears: {
        text: string;
        current: { summaries: { id: string }[] };
        other: { summaries: unknown[] };
      };
    }>(
      `query($l: ID!) { compareYears(legacyId: $l, year: 2025, otherYear: 2024, month: 11) {
         text current { summaries { id } } other { summaries { id } } } }`,
      { l: legacyId },
      angeleno,
    );
    expect(compared.compareYears.current.summaries).toEqual([
      { id: list.periodSummaries.nodes[0].id },
    ]);
    expect(compared.compareYears.other.summaries).toEqual([]);
    expect(compared.compareYears.text).toContain('No summary is stored for November 2024.');
  });

  it('answers a question about a period with that period’s summary, in recall and context', async () => {
    const recall = await ok<{
      recall: {
        edges: {
          node: { sourceType: string; provenance: { period: { period: string; start: string } } };
        }[];
      };
    }>(
      'query($l: ID!) { recall(legacyId: $l, query: "What did we talk about in October?") { edges { node { sourceType provenance { period { period start } } } } } }',
      { l: legacyId },
      angeleno,
    );
    expect(recall.recall.edges[0].node).toEqual({
      sourceType: 'PERIOD_SUMMARY',
      provenance: { period: { period: 'MONTH', start: '2025-10-01' } },
    });
    const context = await ok<{
      context: { sections: { name: string; items: { sourceType: string }[] }[] };
    }>(
      'query($c: ID!) { context(conversationId: $c, query: "What did we talk about in October?") { sections { name items { sourceType } } } }',
      { c: conversations.la },
      angeleno,
    );
    expect(context.context.sections.find((s) => s.name === 'PERIODS')?.items).toEqual([
      { sourceType: 'PERIOD_SUMMARY' },
    ]);
    // The kiwi had no October, only a week that reached into it: theirs, never the other's.
    const theirs = await ok<{
      recall: { edges: { node: { sourceType: string; sourceId: string } }[] };
    }>(
      'query($l: ID!) { recall(legacyId: $l, query: "What did we talk about in October?") { edges { node { sourceType sourceId } } } }',
      { l: legacyId },
      kiwi,
    );
    const own = new Set((await rows(kiwi)).map((r) => r.id));
    const periods = theirs.recall.edges
      .map((e) => e.node)
      .filter((r) => r.sourceType === 'PERIOD_SUMMARY');
    expect(periods.length).toBeGreaterThan(0);
    for (const item of periods) expect(own.has(item.sourceId)).toBe(true);
  });

  it('keeps a deleted summary deleted until the member asks for it again', async () => {
    const week = (await rows(kiwi)).find((r) => r.period === 'WEEK' && r.start === '2025-11-03')!;
    const id = week.id;
    await ok('mutation($id: ID!) { deletePeriodSummary(id: $id) }', { id }, kiwi);
    const [gone] = await ds.query<{ summary: string; vectors: number }[]>(
      `SELECT summary, (SELECT count(*)::int FROM embeddings WHERE item_id = $1) AS vectors
         FROM period_summaries WHERE id = $1`,
      [id],
    );
    expect(gone).toEqual({ summary: '', vectors: 0 });
    // The month built from it is rebuilt on demand; the deleted week is not brought back.
    await ok(
      'mutation { summarizePeriod(input: { legacyId: "' +
        legacyId +
        '", period: MONTH, start: "2025-11-01" }) { outcome } }',
      {},
      kiwi,
    );
    expect(await keysOf(kiwi)).not.toContain('WEEK 2025-11-03 1');
    const again = await ok<{ summarizePeriod: { outcome: string; periodSummary: { id: string } } }>(
      `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: WEEK, start: "2025-11-03" }) {
         outcome periodSummary { id } } }`,
      { l: legacyId },
      kiwi,
    );
    expect(again.summarizePeriod).toEqual({ outcome: 'STORED', periodSummary: { id } });
  });

  it('refuses periods that have not ended or do not start where the period does', async () => {
    const res = await t.gql(
      `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: WEEK, start: "2025-11-04" }) { outcome } }`,
      { l: legacyId },
      kiwi,
    );
    expect(res.errors![0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'INVALID_PERIOD_START',
    });
    const future = await t.gql(
      `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: YEAR, start: "2030-01-01" }) { outcome } }`,
      { l: legacyId },
      kiwi,
    );
    expect(future.errors![0].extensions).toMatchObject({ reason: 'PERIOD_NOT_ENDED' });
  });

  it('rebuilds what a deleted conversation fed, and drops periods left empty', async () => {
    await ok(
      'mutation($id: ID!) { deleteConversation(id: $id) }',
      { id: conversations.la },
      angeleno,
    );
    const stale = (await rows(angeleno)).filter((r) => r.stale);
    expect(stale.length).toBeGreaterThan(0);
    await jobs.drain();
    // Every period held only that conversation: nothing of it is left.
    expect(await keysOf(angeleno)).toEqual([]);
  });

  it('backfills a range and reports its progress', async () => {
    const started = await ok<{
      backfillPeriodSummaries: { id: string; total: number; done: boolean };
    }>(
      `mutation($l: ID!) { backfillPeriodSummaries(input: { legacyId: $l, from: "2025-10-01", to: "2025-11-30" }) {
         id total done } }`,
      { l: legacyId },
      kiwi,
    );
    expect(started.backfillPeriodSummaries.done).toBe(false);
    await jobs.drain();
    const progress = await ok<{
      periodSummaryProgress: {
        total: number;
        pending: number;
        done: boolean;
        stored: number;
        empty: number;
      };
    }>(
      'query($id: ID!) { periodSummaryProgress(id: $id) { total pending done stored empty } }',
      { id: started.backfillPeriodSummaries.id },
      kiwi,
    );
    expect(progress.periodSummaryProgress).toMatchObject({ pending: 0, done: true });
    expect(progress.periodSummaryProgress.stored + progress.periodSummaryProgress.empty).toBe(
      progress.periodSummaryProgress.total,
    );
    const notMine = await t.gql(
      'query($id: ID!) { periodSummaryProgress(id: $id) { total } }',
      { id: started.backfillPeriodSummaries.id },
      angeleno,
    );
    expect(notMine.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('forgets a deleted conversation in the month next door too, before and after the rebuild', async () => {
    const september = async () =>
      (await rows(spring)).find((r) => r.period === 'MONTH' && r.start === '2025-09-01')!;
    // September was built from the week of 29 September, which holds X's 1 October turn.
    expect((await september()).conversation_ids).toContain(conversations.springX);
    await ok(
      'mutation($id: ID!) { deleteConversation(id: $id) }',
      { id: conversations.springX },
      spring,
    );
    const stale = await september();
    expect(stale).toMatchObject({ stale: true, summary: '' });
    // Until it is rebuilt, a question about September gets nothing of it.
    const recall = await ok<{ recall: { edges: { node: { sourceId: string; text: string } }[] } }>(
      'query($l: ID!) { recall(legacyId: $l, query: "What did we talk about in September?") { edges { node { sourceId text } } } }',
      { l: legacyId },
      spring,
    );
    expect(JSON.stringify(recall)).not.toContain('parrot');
    expect(recall.recall.edges.map((e) => e.node.sourceId)).not.toContain(stale.id);
    await jobs.drain();
    const rebuilt = await september();
    expect(rebuilt.stale).toBe(false);
    expect(rebuilt.conversation_ids).toEqual([conversations.spring]);
    expect(rebuilt.summary).not.toContain('parrot');
    expect(await keysOf(spring)).not.toContain('MONTH 2025-10-01 1');
  });

  it('does not bring back a summary deleted while it was being built', async () => {
    const llm = t.app.get<LanguageModel>(LANGUAGE_MODEL);
    const summarize = llm.summarizePeriod.bind(llm);
    const week = (await rows(spring)).find((r) => r.period === 'WEEK' && r.start === '2025-09-22')!;
    jest.spyOn(llm, 'summarizePeriod').mockImplementation(async (input) => {
      // The member deletes it while the model writes.
      await ok('mutation($id: ID!) { deletePeriodSummary(id: $id) }', { id: week.id }, spring);
      return summarize(input);
    });
    const [user] = await ds.query<{ id: string }[]>(`SELECT id FROM users WHERE subject = $1`, [
      spring.sub,
    ]);
    await ds.query(`UPDATE period_summaries SET source_fingerprint = 'old' WHERE id = $1`, [
      week.id,
    ]);
    await jobs.runHandler(PERIOD_JOB, {
      userId: user.id,
      legacyId,
      period: 'WEEK',
      start: '2025-09-22',
    });
    const [after] = await ds.query<{ summary: string; deleted: boolean }[]>(
      `SELECT summary, deleted_at IS NOT NULL AS deleted FROM period_summaries WHERE id = $1`,
      [week.id],
    );
    expect(after).toEqual({ summary: '', deleted: true });
  });

  it('rebuilds the periods an import reaches into', async () => {
    const before = (await rows(kiwi)).find((r) => r.period === 'WEEK' && r.start === '2025-10-27')!;
    expect(before.turn_count).toBe(1);
    await importTurns(kiwi, 'Kiwi later', ['2025-10-29T06:00:00Z']);
    const marked = (await rows(kiwi)).find((r) => r.id === before.id)!;
    expect(marked.stale).toBe(true);
    await jobs.drain();
    const after = (await rows(kiwi)).find((r) => r.id === before.id)!;
    expect(after).toMatchObject({ stale: false, turn_count: 2 });
  });

  it('queues summarizePeriod when the model budget runs out on the way', async () => {
    jest.spyOn(t.app.get(RateLimitService), 'backgroundModelCall').mockResolvedValue(60_000);
    const res = await ok<{ summarizePeriod: { outcome: string; periodSummary: null } }>(
      `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: YEAR, start: "2025-01-01" }) {
         outcome periodSummary { id } } }`,
      { l: legacyId },
      kiwi,
    );
    expect(res.summarizePeriod).toEqual({ outcome: 'QUEUED', periodSummary: null });
    const [queued] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM jobs WHERE type = $1 AND status = 'PENDING' AND key LIKE '%:YEAR:2025-01-01:asked'`,
      [PERIOD_JOB],
    );
    expect(queued.n).toBe(1);
  });

  it('refuses a backfill over too long a range at once, before looking at it', async () => {
    const started = performance.now();
    const res = await t.gql(
      `mutation($l: ID!) { backfillPeriodSummaries(input: { legacyId: $l, from: "1000-01-01", to: "2025-01-01" }) { id } }`,
      { l: legacyId },
      kiwi,
    );
    expect(res.errors![0].extensions).toMatchObject({ reason: 'INVALID_RANGE' });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
