import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { ScheduledTasks } from '../../src/jobs/scheduled-tasks.service.js';
import { startTestApp, TestApp } from '../support/test-app.js';

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
    });
    ds = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  /** Runs a scheduled task now, as its cron tick would, and waits for it. */
  const runTask = async (name: string) => {
    tick += 60_000;
    expect(await t.app.get(ScheduledTasks).tick({ name }, new Date(tick))).toBe(true);
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
});
