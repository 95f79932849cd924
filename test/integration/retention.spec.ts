import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { ScheduledTasksService } from '../../src/jobs/scheduled-tasks.service.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';

/**
 * Tables that would otherwise grow forever are pruned by scheduled tasks, each with its own
 * retention; each task runs twice to show that the second run changes nothing.
 */
describe('retention of operational tables', () => {
  let t: TestApp;
  let ds: DataSource;
  let tick = Date.parse('2026-06-01T00:00:00Z');

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      MODEL_CALLS_RETENTION_DAYS: '90',
      JOBS_KEEP_SUCCEEDED_DAYS: '7',
      JOBS_KEEP_FAILED_DAYS: '30',
      SEARCH_METRICS_RETENTION_DAYS: '30',
      SEARCH_METRICS_TEXT: 'true',
      EVENT_PAYLOAD_RETENTION: '5m',
    });
    ds = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  /** Runs a scheduled task now, as its cron tick would, and waits for it. */
  const runTask = async (name: string) => {
    tick += 60_000;
    expect(await t.app.get(ScheduledTasksService).tick({ name }, new Date(tick))).toBe(true);
    await t.app.get(JobsService).drain();
  };
  const value = async (sql: string) => ((await ds.query(sql)) as { n: unknown }[])[0].n;

  it('deletes model-call records older than MODEL_CALLS_RETENTION_DAYS', async () => {
    const insert = (days: number) =>
      ds.query(
        `INSERT INTO model_calls (task, model, prompt_tokens, completion_tokens, duration_ms,
                                  attempts, ok, created_at)
         VALUES ('reply', 'test', 1, 1, 1, 1, true, now() - ($1 || ' days')::interval)`,
        [String(days)],
      );
    await insert(120);
    await insert(91);
    await insert(89);
    await insert(0);
    await runTask('model-calls-prune');
    const left = `SELECT count(*)::int AS n FROM model_calls WHERE model = 'test'`;
    expect(await value(left)).toBe(2);
    await runTask('model-calls-prune');
    expect(await value(left)).toBe(2);
  });

  it('deletes succeeded jobs after 7 days and failed ones after 30, never pending ones', async () => {
    const insert = (status: string, days: number, key: string) =>
      ds.query(
        `INSERT INTO jobs (type, key, payload, status, run_at, finished_at, created_at, updated_at)
         VALUES ('test:retention', $1, '{}', $2, now(), now() - ($3 || ' days')::interval,
                 now() - ($3 || ' days')::interval, now())`,
        [key, status, String(days)],
      );
    await insert('SUCCEEDED', 8, 'old-success');
    await insert('SUCCEEDED', 6, 'new-success');
    await insert('FAILED', 31, 'old-failure');
    await insert('FAILED', 8, 'new-failure');
    await ds.query(
      `INSERT INTO jobs (type, key, payload, status, run_at, created_at, updated_at)
       VALUES ('test:retention', 'pending', '{}', 'PENDING', now() + interval '1 year',
               now() - interval '90 days', now())`,
    );
    const left = `SELECT string_agg(key, ',' ORDER BY key) AS n FROM jobs WHERE type = 'test:retention'`;
    await runTask('jobs-cleanup');
    expect(await value(left)).toBe('new-failure,new-success,pending');
    await runTask('jobs-cleanup');
    expect(await value(left)).toBe('new-failure,new-success,pending');
  });

  it('deletes retrieval metrics older than SEARCH_METRICS_RETENTION_DAYS', async () => {
    const insert = (days: number) =>
      ds.query(
        `INSERT INTO retrieval_metrics (operation, hybrid, fusion, created_at)
         VALUES ('RECALL', true, 'rrf', now() - ($1 || ' days')::interval)`,
        [String(days)],
      );
    await insert(40);
    await insert(31);
    await insert(29);
    const left = `SELECT count(*)::int AS n FROM retrieval_metrics WHERE fusion = 'rrf'`;
    await runTask('metrics-prune');
    expect(await value(left)).toBe(1);
    await runTask('metrics-prune');
    expect(await value(left)).toBe(1);
  });

  it('deletes a metrics row’s query text with its conversation, keeping the row', async () => {
    const user = await t.user('retention-user');
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Ada" }) { id } }',
      {},
      user,
    );
    const conversation = await t.gql<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacy.data!.createLegacy.id },
      user,
    );
    const id = conversation.data!.startConversation.id;
    const ctx = await t.gql(
      'query($c: ID!) { context(conversationId: $c, query: "the Zephyrine orchard") { tokenCount } }',
      { c: id },
      user,
    );
    expect(ctx.errors).toBeUndefined();
    const texts = `SELECT count(*)::int AS n FROM retrieval_metric_texts WHERE query_text LIKE '%Zephyrine%'`;
    const rows = `SELECT count(*)::int AS n FROM retrieval_metrics WHERE conversation_id = '${id}'`;
    expect(await value(texts)).toBe(1);
    expect(await value(rows)).toBe(1);
    await t.gql('mutation($c: ID!) { deleteConversation(id: $c) }', { c: id }, user);
    expect(await value(texts)).toBe(0);
    // The row stays for the report, without the conversation or its words.
    expect(
      await value(`SELECT count(*)::int AS n FROM retrieval_metrics WHERE conversation_id IS NULL`),
    ).toBeGreaterThanOrEqual(1);
  });

  it('prunes parked event payloads on a schedule with the PostgreSQL event bus', async () => {
    const tasks = t.app.get(ScheduledTasksService);
    // Only the PostgreSQL bus parks events; the in-process bus of the embedded database never does.
    expect(tasks.names().includes('event-payloads-prune')).toBe(ON_SERVER);
    if (!ON_SERVER) return;
    await ds.query(
      `INSERT INTO event_payloads (body, created_at)
       VALUES ('old', now() - interval '10 minutes'), ('new', now())`,
    );
    const left = `SELECT string_agg(body, ',' ORDER BY body) AS n FROM event_payloads`;
    await runTask('event-payloads-prune');
    expect(await value(left)).toBe('new');
    await runTask('event-payloads-prune');
    expect(await value(left)).toBe('new');
  });
});
