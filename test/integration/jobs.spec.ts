import { DataSource } from 'typeorm';
import { JobRepository } from '../../src/jobs/job.repository.js';
import { JobDeferred } from '../../src/jobs/jobs.exception.js';
import { JobsService, retryDelayMs } from '../../src/jobs/jobs.service.js';
import { ScheduledTasksService } from '../../src/jobs/scheduled-tasks.service.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { createTestDatabase, ON_SERVER } from '../support/test-database.js';

describe('durable jobs', () => {
  let t: TestApp;
  let jobs: JobsService;
  let ds: DataSource;
  const seen: string[] = [];
  let failuresLeft = 0;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      JOBS_RETRY_BASE_MS: '10',
      JOBS_MAX_ATTEMPTS: '3',
    });
    jobs = t.app.get(JobsService);
    ds = t.app.get(DataSource);
    jobs.register<{ n: number }>('test:record', async (p) => {
      seen.push(`record:${p.n}`);
    });
    jobs.register('test:flaky', async () => {
      if (failuresLeft-- > 0) throw new Error('model endpoint down');
      seen.push('flaky:ok');
    });
    jobs.register('test:always-fails', async () => {
      throw new Error('boom');
    });
    let deferrals = 1;
    jobs.register('test:deferred', async () => {
      if (deferrals-- > 0) throw new JobDeferred(5, 'rate limited');
      seen.push('deferred:ok');
    });
    jobs.register<{ n: number }>(
      'test:hooked',
      async (p) => {
        seen.push(`attempt:${p.n}`);
        if (p.n !== 3) throw new Error(`failed ${p.n}`);
      },
      {
        onFinalFailure: async (p, err) => {
          seen.push(`final:${p.n}:${(err as Error).message}`);
          if (p.n === 1) throw new Error('the hook itself failed');
        },
      },
    );
  });

  afterAll(() => t.close());
  beforeEach(() => {
    seen.length = 0;
  });

  const statusOf = async (type: string) =>
    (await ds.query(`SELECT status, attempts FROM jobs WHERE type = $1 ORDER BY created_at`, [
      type,
    ])) as {
      status: string;
      attempts: number;
    }[];

  it('coalesces pending jobs with the same key and runs them once', async () => {
    expect(await jobs.enqueue('test:record', 'k1', { n: 1 })).toBe(true);
    expect(await jobs.enqueue('test:record', 'k1', { n: 1 })).toBe(false);
    await jobs.drain();
    expect(seen).toEqual(['record:1']);
    // Once it ran, the same key may be enqueued again (a new check), unless 'once'.
    expect(await jobs.enqueue('test:record', 'k1', { n: 2 })).toBe(true);
    await jobs.drain();
    expect(await jobs.enqueue('test:record', 'k1', { n: 3 }, { dedupe: 'once' })).toBe(false);
    expect(seen).toEqual(['record:1', 'record:2']);
  });

  it('does not enqueue when the surrounding transaction rolls back', async () => {
    await ds
      .transaction(async (manager) => {
        await jobs.enqueue('test:record', 'rolled-back', { n: 9 }, { manager });
        throw new Error('abort');
      })
      .catch(() => undefined);
    await jobs.drain();
    expect(seen).toEqual([]);
  });

  it('retries with backoff and succeeds', async () => {
    failuresLeft = 2;
    await jobs.enqueue('test:flaky', 'f1', {});
    await jobs.drain();
    expect(seen).toEqual(['flaky:ok']);
    expect(await statusOf('test:flaky')).toEqual([{ status: 'SUCCEEDED', attempts: 3 }]);
  });

  it('keeps a job as FAILED after its last attempt and lets a platform admin retry it', async () => {
    await jobs.enqueue('test:always-fails', 'x', { conversationId: 'c' });
    await jobs.drain();
    expect(await statusOf('test:always-fails')).toEqual([{ status: 'FAILED', attempts: 3 }]);

    const admin = await t.user('root', { admin: true });
    const member = await t.user('member');
    const Q = '{ failedJobs(first: 10) { nodes { id type status attempts lastError payload } } }';
    const denied = await t.gql(Q, {}, member);
    expect(denied.errors![0].extensions!.code).toBe('FORBIDDEN');
    expect(denied.data).toBeNull();
    const listed = await t.gql<{
      failedJobs: { nodes: { id: string; type: string; lastError: string }[] };
    }>(Q, {}, admin);
    const failed = listed.data!.failedJobs.nodes.find((n) => n.type === 'test:always-fails')!;
    expect(failed.lastError).toBe('boom');

    const R = `mutation($id: ID!) { retryJob(id: $id) { status attempts } }`;
    expect((await t.gql(R, { id: failed.id }, member)).errors![0].extensions!.code).toBe(
      'FORBIDDEN',
    );
    const retried = await t.gql<{ retryJob: { status: string; attempts: number } }>(
      R,
      { id: failed.id },
      admin,
    );
    expect(retried.data!.retryJob).toEqual({ status: 'PENDING', attempts: 0 });
    const again = await t.gql(R, { id: failed.id }, admin);
    expect(again.errors![0].extensions!.code).toBe('CONFLICT');
    const missing = await t.gql(R, { id: '00000000-0000-4000-8000-000000000000' }, admin);
    expect(missing.errors![0].extensions!.code).toBe('NOT_FOUND');
  });

  it('tells a job type when its last attempt failed, once, not when it will retry', async () => {
    await jobs.enqueue('test:hooked', 'h1', { n: 1 }, { maxAttempts: 2 });
    await jobs.drain();
    // Two attempts, one final call; the hook's own failure leaves the job FAILED all the same.
    expect(seen).toEqual(['attempt:1', 'attempt:1', 'final:1:failed 1']);
    seen.length = 0;
    await jobs.enqueue('test:hooked', 'h3', { n: 3 }, { maxAttempts: 1 });
    await jobs.drain();
    expect(seen).toEqual(['attempt:3']);
    expect(await statusOf('test:hooked')).toEqual([
      { status: 'FAILED', attempts: 2 },
      { status: 'SUCCEEDED', attempts: 1 },
    ]);
  });

  it('runs a lane’s jobs in slots of their own: a job held in the archives lane holds up no other', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    jobs.register(
      'test:archive-held',
      async () => {
        holding = true;
        await held;
      },
      { lane: 'archives' },
    );
    // Nothing else waiting: both jobs are claimed in the same pass.
    await jobs.drain();
    await jobs.enqueue('test:archive-held', 'held', {});
    await jobs.enqueue('test:record', 'beside-held', { n: 7 });
    const draining = jobs.drain({ types: ['test:archive-held', 'test:record'] });
    // The default lane's job runs while the archive lane's is held (either may start first).
    const deadline = Date.now() + 20_000;
    while (!(seen.includes('record:7') && holding) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const ranBeside = seen.includes('record:7') && holding;
    release();
    await draining;
    expect(ranBeside).toBe(true);
    expect(await statusOf('test:archive-held')).toEqual([{ status: 'SUCCEEDED', attempts: 1 }]);
  });

  it('defers without spending an attempt', async () => {
    await jobs.enqueue('test:deferred', 'd', {});
    await jobs.drain();
    expect(seen).toEqual(['deferred:ok']);
    expect(await statusOf('test:deferred')).toEqual([{ status: 'SUCCEEDED', attempts: 1 }]);
  });

  it('reclaims a job whose worker died holding it', async () => {
    await ds.query(
      `INSERT INTO jobs (type, key, payload, status, attempts, locked_by, locked_until)
       VALUES ('test:record', 'orphan', '{"n": 7}', 'RUNNING', 1, 'dead-worker', now() - interval '1 second')`,
    );
    await jobs.drain();
    expect(seen).toEqual(['record:7']);
  });

  it('hands back every state a crash leaves behind, and a second pass changes nothing', async () => {
    const repo = t.app.get(JobRepository);
    // No handler runs these: what the reaper does is all that happens to them.
    const insert = (
      key: string,
      status: string,
      attempts: number,
      lockedFor: string,
      age: string,
    ) =>
      ds.query(
        `INSERT INTO jobs (type, key, payload, status, attempts, max_attempts, locked_by, locked_until, created_at)
         VALUES ('test:crashed', $1, '{}', $2, $3, 3, CASE WHEN $2 = 'RUNNING' THEN 'dead' END,
                 CASE WHEN $2 = 'RUNNING' THEN now() + $4::interval END, now() - $5::interval)`,
        [key, status, attempts, lockedFor, age],
      );
    await insert('alone', 'RUNNING', 1, '-1 second', '1 minute');
    // The defect of 2026-11-28: a running job whose pending twin already waits.
    await insert('twin', 'RUNNING', 1, '-1 second', '2 minutes');
    await insert('twin', 'PENDING', 0, '0', '1 minute');
    // Two workers ran one key; both died.
    await insert('double', 'RUNNING', 1, '-1 second', '2 minutes');
    await insert('double', 'RUNNING', 1, '-1 second', '1 minute');
    await insert('spent', 'RUNNING', 3, '-1 second', '1 minute');
    await insert('live', 'RUNNING', 1, '1 hour', '1 minute');
    const rows = () =>
      ds.query(
        `SELECT key, status, attempts, last_error IS NOT NULL AS failed_with_reason,
                created_at < now() - interval '90 seconds' AS older
           FROM jobs WHERE type = 'test:crashed' ORDER BY key, created_at`,
      );

    expect(await repo.requeueInterrupted('expired')).toEqual({ requeued: 2, merged: 2, failed: 1 });
    const after = await rows();
    expect(after).toEqual([
      { key: 'alone', status: 'PENDING', attempts: 1, failed_with_reason: false, older: false },
      // The newer of the two stays: its payload is the latest.
      { key: 'double', status: 'PENDING', attempts: 1, failed_with_reason: false, older: false },
      { key: 'live', status: 'RUNNING', attempts: 1, failed_with_reason: false, older: false },
      { key: 'spent', status: 'FAILED', attempts: 3, failed_with_reason: true, older: false },
      { key: 'twin', status: 'PENDING', attempts: 0, failed_with_reason: false, older: false },
    ]);
    expect(await repo.requeueInterrupted('expired')).toEqual({ requeued: 0, merged: 0, failed: 0 });
    expect(await rows()).toEqual(after);
    // At the boot of the only process on an embedded database, nothing can still be running.
    expect(await repo.requeueInterrupted('all')).toEqual({ requeued: 1, merged: 0, failed: 0 });
    expect(await repo.requeueInterrupted('all')).toEqual({ requeued: 0, merged: 0, failed: 0 });
    await ds.query(`DELETE FROM jobs WHERE type = 'test:crashed'`);
  });

  it('leaves planner statistics to autovacuum on a server', () => {
    expect(t.app.get(ScheduledTasksService).names().includes('database-analyze')).toBe(!ON_SERVER);
  });

  (ON_SERVER ? it.skip : it)(
    'refreshes the planner statistics of the embedded database every hour',
    async () => {
      // PGlite runs no autovacuum: without this task the planner would think every table empty.
      await jobs.enqueue('test:record', 'stats-1', { n: 1 });
      await jobs.enqueue('test:record', 'stats-2', { n: 2 });
      const estimate = async () =>
        Number(
          (
            (await ds.query(`SELECT reltuples FROM pg_class WHERE relname = 'jobs'`)) as {
              reltuples: number;
            }[]
          )[0].reltuples,
        );
      const before = await estimate();
      const tasks = t.app.get(ScheduledTasksService);
      expect(tasks.names()).toContain('database-analyze');
      expect(await tasks.tick({ name: 'database-analyze' })).toBe(true);
      await jobs.drain();
      const [{ count }] = (await ds.query(`SELECT count(*)::int AS count FROM jobs`)) as {
        count: number;
      }[];
      expect(before).not.toBe(count);
      expect(await estimate()).toBe(count);
    },
  );

  it('schedules a task once per tick even when two instances tick', async () => {
    const tasks = t.app.get(ScheduledTasksService);
    let runs = 0;
    tasks.register('test-task', '* * * * *', async () => {
      runs++;
    });
    const at = new Date('2026-01-01T00:00:00Z');
    expect(await tasks.tick({ name: 'test-task' }, at)).toBe(true);
    expect(await tasks.tick({ name: 'test-task' }, at)).toBe(false);
    // Another instance holding no lease cannot schedule.
    await ds.query(
      `UPDATE scheduler_leases SET holder = 'other', expires_at = now() + interval '1 minute'`,
    );
    expect(await tasks.tick({ name: 'test-task' }, new Date('2026-01-01T00:01:00Z'))).toBe(false);
    await jobs.drain();
    expect(runs).toBe(1);
  });

  it('grows the retry delay exponentially with jitter', () => {
    expect(retryDelayMs(1, 1000, () => 0.5)).toBe(1000);
    expect(retryDelayMs(3, 1000, () => 0.5)).toBe(4000);
    expect(retryDelayMs(3, 1000, () => 0)).toBe(3000);
    expect(retryDelayMs(40, 1000, () => 0.5)).toBe(3_600_000);
  });
});

(ON_SERVER ? describe : describe.skip)('the scheduler with two instances on one server', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const quiet = { JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' };
    a = await startTestApp(quiet, { keepData: true });
    b = await startTestApp({ ...quiet, ...a.databaseEnv });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('runs a task once per tick when both instances tick at the same moment', async () => {
    let runs = 0;
    for (const t of [a, b]) {
      t.app.get(ScheduledTasksService).register('test-both', '* * * * *', async () => {
        runs++;
      });
    }
    const at = new Date('2026-03-01T10:00:00Z');
    const ticked = await Promise.all(
      [a, b].map((t) => t.app.get(ScheduledTasksService).tick({ name: 'test-both' }, at)),
    );
    expect(ticked.filter(Boolean)).toHaveLength(1);
    await Promise.all([a, b].map((t) => t.app.get(JobsService).drain()));
    expect(runs).toBe(1);
  });
});

describe('job leases', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      JOBS_LEASE_MS: '2000',
      SHUTDOWN_TIMEOUT_MS: '300',
    });
  });
  afterAll(() => t.close());

  it('stops waiting for a running job after SHUTDOWN_TIMEOUT_MS, leaving it to be retried', async () => {
    const jobs = t.app.get(JobsService);
    let release = () => undefined as void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    jobs.register('test:stuck', () => stuck);
    await jobs.enqueue('test:stuck', 'stuck-1', {});
    const running = jobs.drain({ types: ['test:stuck'], timeoutMs: 5000 }).catch(() => undefined);
    // The boot's own jobs may run first: wait until this one is the job running.
    const ds = t.app.get(DataSource);
    const isRunning = async () =>
      (await ds.query(`SELECT 1 FROM jobs WHERE type = 'test:stuck' AND status = 'RUNNING'`))
        .length > 0;
    while (!(await isRunning())) await new Promise((r) => setTimeout(r, 10));
    const started = performance.now();
    await jobs.beforeApplicationShutdown();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(3000);
    // Not lost: still RUNNING, for its lease (or the next boot) to hand back.
    expect(
      await t.app.get(DataSource).query(`SELECT status FROM jobs WHERE type = 'test:stuck'`),
    ).toEqual([{ status: 'RUNNING' }]);
    release();
    await running;
  });

  it('keeps a job that runs longer than its lease from being claimed by another instance', async () => {
    const jobs = t.app.get(JobsService);
    let runs = 0;
    jobs.register('test:slow', async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 4500));
    });
    await jobs.enqueue('test:slow', 'slow-1', {});
    const running = jobs.drain({ types: ['test:slow'] });
    // Another instance polls well after the first lease would have run out.
    await new Promise((r) => setTimeout(r, 3500));
    const stolen = await t.app.get(JobRepository).claim('other-instance', 10, 2000, ['test:slow']);
    await running;
    expect(stolen).toEqual([]);
    expect(runs).toBe(1);
    expect(
      await t.app
        .get(DataSource)
        .query(`SELECT status, attempts FROM jobs WHERE type = 'test:slow'`),
    ).toEqual([{ status: 'SUCCEEDED', attempts: 1 }]);
  });
});

describe('the job worker on the embedded database', () => {
  let t: TestApp;

  beforeAll(async () => {
    const db = await createTestDatabase({ embedded: true });
    // The worker polls only when woken: this test wakes it.
    t = await startTestApp({ ...db.env, JOBS_SCHEDULER: 'false', JOBS_POLL_MS: '60000' });
  });
  afterAll(() => t.close());

  it('claims one job at a time however often it is woken while a claim waits for the database', async () => {
    const jobs = t.app.get(JobsService);
    await jobs.drain();
    let running = 0;
    let most = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    jobs.register('test:one-at-a-time', async () => {
      most = Math.max(most, ++running);
      await finished;
      running--;
    });
    const due = new Date(Date.now() + 300);
    for (const key of ['a', 'b', 'c']) {
      await jobs.enqueue('test:one-at-a-time', key, {}, { runAt: due });
    }
    // A request holds the connection: the worker's claims wait behind it, woken thrice.
    const runner = t.app.get(DataSource).createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    for (let i = 0; i < 3; i++) {
      jobs.nudge();
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 400));
    await runner.commitTransaction();
    await runner.release();
    await new Promise((r) => setTimeout(r, 300));
    finish();
    await jobs.drain({ types: ['test:one-at-a-time'] });
    expect(most).toBe(1);
  });
});
