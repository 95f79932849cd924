import { randomUUID } from 'node:crypto';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { JobEntity, JobStatus } from './job.entity.js';
import { JobRepository } from './job.repository.js';
import { JobLane, JobLanes } from './job-lanes.js';
import { JobDeferred } from './jobs.exception.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { asBackground } from '../database/database-queue.js';
import { StorageGuard } from '../database/storage-guard.service.js';
import { databaseFailure } from '../database/database-failure.js';
import type { JobOutcome } from '../metrics/service-metrics.js';

export interface JobContext {
  job: JobEntity;
  /** 1 on the first run. */
  attempt: number;
  /**
   * Whether another job of this job's lane is due and waiting for a slot: a long job that can
   * go on from where it stopped defers itself then (JobDeferred(0)) and takes its turn again.
   */
  othersWaiting(): Promise<boolean>;
}

export type JobHandler<P = Record<string, unknown>> = (
  payload: P,
  ctx: JobContext,
) => Promise<void>;

export interface EnqueueOptions {
  /** Run no earlier than this. */
  runAt?: Date;
  /** 'pending' (default): coalesce with a waiting job of the same key. 'once': never again. */
  dedupe?: 'pending' | 'once';
  maxAttempts?: number;
  /** Enqueue inside this transaction, so the job exists only if the transaction commits. */
  manager?: EntityManager;
}

export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  const exp = baseMs * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(exp, 60 * 60 * 1000);
  return Math.round(capped * (0.75 + random() * 0.5));
}

/**
 * Durable jobs in PostgreSQL. Modules register handlers by type and enqueue with an
 * idempotency key; workers claim due jobs with FOR UPDATE SKIP LOCKED, retry failures with
 * exponential backoff and keep the ones that exhaust their attempts as FAILED.
 * Handlers must be idempotent: effects are guarded by unique constraints, so a job that runs
 * twice (a crash after the work, before SUCCEEDED was written) changes nothing the second time.
 */
@Injectable()
export class JobsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Jobs');
  private readonly handlers = new Map<string, JobHandler>();
  private readonly finalFailureHooks = new Map<
    string,
    (payload: unknown, err: unknown) => Promise<void>
  >();
  private readonly workerId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly lanes: JobLanes;
  private stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private pollAgain = false;
  private readonly inFlight = new Set<Promise<void>>();
  private reapedAtBoot = false;
  private nextReap = 0;

  constructor(
    private readonly jobs: JobRepository,
    private readonly config: AppConfig,
    @Optional() private readonly metrics?: ServiceMetrics,
    @Optional() private readonly storage?: StorageGuard,
  ) {
    this.lanes = new JobLanes(this.concurrency());
  }

  /**
   * `onFinalFailure` runs when an attempt fails and none is left (not when the handler
   * deferred): what the job was for can be marked failed rather than pending for ever. It runs
   * before the job is written FAILED, so a crash in between leaves the job to run it again.
   */
  register<P>(
    type: string,
    handler: JobHandler<P>,
    options: {
      onFinalFailure?: (payload: P, err: unknown) => Promise<void>;
      /** A lane declared with `lane()`; the default lane otherwise. */
      lane?: string;
    } = {},
  ): void {
    if (this.handlers.has(type)) throw new Error(`job type ${type} registered twice`);
    this.lanes.assign(type, options.lane);
    this.handlers.set(type, handler as JobHandler);
    if (options.onFinalFailure) {
      this.finalFailureHooks.set(
        type,
        options.onFinalFailure as (payload: unknown, err: unknown) => Promise<void>,
      );
    }
  }

  /** Declares a lane (job-lanes.ts): types registered in it run in slots of their own. */
  lane(name: string, concurrency: number): void {
    this.lanes.declare(name, concurrency);
  }

  async enqueue(
    type: string,
    key: string,
    payload: Record<string, unknown>,
    options: EnqueueOptions = {},
  ): Promise<boolean> {
    const job = {
      type,
      key,
      payload,
      runAt: options.runAt,
      maxAttempts: options.maxAttempts ?? this.config.env.JOBS_MAX_ATTEMPTS,
    };
    const added =
      options.dedupe === 'once'
        ? await this.jobs.enqueueOnce(job, options.manager)
        : await this.jobs.enqueue(job, options.manager);
    // Inside a transaction the job is not visible yet; the next poll picks it up.
    if (added && !options.manager) this.nudge();
    return added;
  }

  /**
   * Records work that is set aside as a FAILED job (see JobRepository.insertFailed): listed in
   * failedJobs with `error`, run by the registered handler when an operator retries it.
   */
  recordFailed(
    type: string,
    key: string,
    payload: Record<string, unknown>,
    error: string,
    options: { manager?: EntityManager; maxAttempts?: number } = {},
  ): Promise<boolean> {
    return this.jobs.insertFailed(
      { type, key, payload, maxAttempts: options.maxAttempts ?? this.config.env.JOBS_MAX_ATTEMPTS },
      error,
      options.manager,
    );
  }

  onApplicationBootstrap(): void {
    if (this.config.env.JOBS_WORKER) this.schedule(0);
  }

  /**
   * Lets running jobs finish, for SHUTDOWN_TIMEOUT_MS at most: one left behind is not lost (its
   * transaction rolls back; the next boot hands it back on the embedded database, another
   * instance once its lease ends on a server).
   */
  // Before any module's shutdown hook: the database must still be there for running jobs to end.
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.allSettled([...this.inFlight]).then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.config.env.SHUTDOWN_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) {
      this.logger.warn({
        msg: 'shutdown left running jobs to be retried',
        count: this.inFlight.size,
      });
    }
  }

  /** Wake the worker now rather than at the next poll. */
  nudge(): void {
    if (this.config.env.JOBS_WORKER && !this.stopping) this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    // Background work: on the embedded database its statements wait behind requests'.
    this.timer = setTimeout(() => void asBackground(() => this.poll()), delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.timer = null;
    if (this.stopping) return;
    // One claim at a time: a poll woken while another's claim waits for the database (behind
    // requests, on the embedded database) would count the same free slots and claim beside it.
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    let claimed = 0;
    try {
      claimed = await this.claimAndRun(false);
    } catch (err) {
      this.logger.error({ msg: 'job poll failed', error: (err as Error).message });
    } finally {
      this.polling = false;
    }
    const again = this.pollAgain;
    this.pollAgain = false;
    this.schedule(claimed > 0 || again ? 0 : this.config.env.JOBS_POLL_MS);
  }

  /** The default lane's slots; a lane a module declares has its own beside them. */
  private concurrency(): number {
    // One database session: parallel jobs would only queue on the single connection.
    return this.config.embedded ? 1 : this.config.env.JOBS_CONCURRENCY;
  }

  private claimAndRun(wait: boolean): Promise<number> {
    return asBackground(() => this.claimAndRunHere(wait));
  }

  /** Claims, lane by lane, as many due jobs as each lane has free slots, and runs them. */
  private async claimAndRunHere(wait: boolean): Promise<number> {
    // A full disk refuses every write: jobs wait for room rather than spend their attempts.
    if (this.handlers.size === 0 || this.storage?.current.full) return 0;
    // drain() settles everything, a dead worker's jobs included, whenever it is asked.
    await this.requeueInterrupted(wait);
    const runs: Promise<void>[] = [];
    for (const lane of this.lanes.all()) {
      const free = lane.concurrency - lane.running;
      if (free <= 0 || lane.types.length === 0) continue;
      const claimed = await this.jobs.claim(
        this.workerId,
        free,
        this.config.env.JOBS_LEASE_MS,
        lane.types,
      );
      for (const job of claimed) {
        runs.push(
          this.track(lane, this.execute(job)).catch((err: unknown) => {
            // Recording the outcome failed (the database went away): the lease brings it back.
            this.logger.error({
              msg: 'job outcome not recorded',
              jobId: job.id,
              error: String(err),
            });
          }),
        );
      }
    }
    if (wait) await Promise.all(runs);
    return runs.length;
  }

  /**
   * Hands back the jobs of workers that stopped, before claiming: those whose lease ran out,
   * every third of a lease; and on the embedded database, before this process claims anything,
   * every RUNNING job (only one process can open it, so whatever was RUNNING died with the last).
   */
  private async requeueInterrupted(now = false): Promise<void> {
    const atBoot = this.config.embedded && !this.reapedAtBoot;
    if (!atBoot && !now && Date.now() < this.nextReap) return;
    const found = await this.jobs.requeueInterrupted(atBoot ? 'all' : 'expired');
    this.reapedAtBoot = true;
    this.nextReap = Date.now() + Math.floor(this.config.env.JOBS_LEASE_MS / 3);
    if (found.requeued + found.merged + found.failed > 0) {
      this.logger.warn({ msg: 'interrupted jobs handed back', ...found });
    }
  }

  private track(lane: JobLane, run: Promise<void>): Promise<void> {
    lane.running++;
    this.inFlight.add(run);
    return run.finally(() => {
      lane.running--;
      this.inFlight.delete(run);
      // A slot is free: look for the next job now, not at the next poll (with one slot, as on
      // the embedded database, waiting JOBS_POLL_MS capped the queue at about a job a second).
      this.nudge();
    });
  }

  private async execute(job: JobEntity): Promise<void> {
    const handler = this.handlers.get(job.type)!;
    const started = performance.now();
    const heartbeat = this.keepLease(job);
    const counted = (outcome: JobOutcome) =>
      this.metrics?.jobRun(job.type, outcome, (performance.now() - started) / 1000);
    const othersWaiting = () => this.jobs.othersWaiting(this.lanes.of(job.type).types, job.id);
    try {
      await handler(job.payload, { job, attempt: job.attempts, othersWaiting });
      await this.recorded(() => this.jobs.succeed(job.id, this.workerId));
      counted('succeeded');
      this.logger.debug({
        msg: 'job succeeded',
        type: job.type,
        jobId: job.id,
        ms: Math.round(performance.now() - started),
      });
    } catch (err) {
      // Deferred, or stopped by the database going away (or filling up): tried again later
      // without spending an attempt, as nothing about the job itself failed.
      const away = databaseFailure(err);
      if (err instanceof JobDeferred || away) {
        const delayMs = err instanceof JobDeferred ? err.delayMs : away!.retryAfterSeconds! * 1000;
        const reason = err instanceof Error ? err.message : String(err);
        await this.recorded(() => this.jobs.fail(job, this.workerId, reason, delayMs, false));
        counted('deferred');
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      const retryIn =
        job.attempts < job.maxAttempts
          ? retryDelayMs(job.attempts, this.config.env.JOBS_RETRY_BASE_MS)
          : null;
      if (retryIn === null) await this.onFinalFailure(job, err);
      const status = await this.recorded(() =>
        this.jobs.fail(job, this.workerId, message, retryIn),
      );
      counted(status === JobStatus.FAILED ? 'failed' : 'retried');
      const log = {
        msg: 'job failed',
        type: job.type,
        jobId: job.id,
        attempt: job.attempts,
        error: message,
      };
      if (status === JobStatus.FAILED) this.logger.error({ ...log, final: true });
      else this.logger.warn({ ...log, retryInMs: retryIn });
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Writes a job's outcome, waiting out the database going away (for a lease at most, while the
   * lease is kept): a job whose work is done is not left RUNNING until its lease runs out, nor
   * run again, because the database was away the moment it finished.
   */
  private async recorded<T>(write: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.config.env.JOBS_LEASE_MS;
    for (let waitMs = 250; ; waitMs = Math.min(waitMs * 2, 5000)) {
      try {
        return await write();
      } catch (err) {
        if (!databaseFailure(err) || Date.now() + waitMs > deadline || this.stopping) throw err;
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }

  private async onFinalFailure(job: JobEntity, err: unknown): Promise<void> {
    try {
      await this.finalFailureHooks.get(job.type)?.(job.payload, err);
    } catch (hookErr) {
      // The job is kept FAILED all the same: an operator sees it and its error.
      this.logger.error({
        msg: 'final-failure hook failed',
        type: job.type,
        jobId: job.id,
        error: hookErr instanceof Error ? hookErr.message : String(hookErr),
      });
    }
  }

  /**
   * Renews a running job's lease at a third of its length, so that only a worker that died
   * loses its job to another instance, however long the job takes (a slow model call).
   */
  private keepLease(job: JobEntity): NodeJS.Timeout {
    const leaseMs = this.config.env.JOBS_LEASE_MS;
    const timer = setInterval(
      () => {
        this.jobs.renewLease(job.id, this.workerId, leaseMs).then(
          (held) => {
            if (!held) clearInterval(timer);
          },
          (err: Error) =>
            this.logger.warn({
              msg: 'job lease renewal failed',
              jobId: job.id,
              error: err.message,
            }),
        );
      },
      Math.floor(leaseMs / 3),
    );
    timer.unref();
    return timer;
  }

  /**
   * Runs due jobs in this process until none are left (or the deadline passes): for tests,
   * benchmarks and the evaluation, which need background work to have settled.
   */
  async drain(
    options: { timeoutMs?: number; types?: string[]; horizonMs?: number } = {},
  ): Promise<void> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    const types = options.types ?? [...this.handlers.keys()];
    for (;;) {
      await Promise.allSettled([...this.inFlight]);
      const ran = await this.claimAndRun(true);
      // Retries due soon count as unsettled; work deferred further out does not.
      const horizon = options.horizonMs ?? 10_000;
      if (ran === 0 && (await this.jobs.countUnsettled(types, horizon)) === 0) return;
      if (Date.now() > deadline) throw new Error('jobs did not settle before the deadline');
      if (ran === 0) await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Runs one handler directly, as a worker would: for tests that prove idempotency. */
  async runHandler(type: string, payload: Record<string, unknown>): Promise<void> {
    const handler = this.handlers.get(type);
    if (!handler) throw new Error(`no handler for ${type}`);
    const now = new Date();
    const job: JobEntity = {
      id: randomUUID(),
      type,
      key: 'direct',
      payload,
      status: JobStatus.RUNNING,
      attempts: 1,
      maxAttempts: 1,
      runAt: now,
      lockedBy: this.workerId,
      lockedUntil: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    };
    await handler(payload, { job, attempt: 1, othersWaiting: async () => false });
  }

  findById(id: string) {
    return this.jobs.findById(id);
  }

  pageFailed(limit: number, after?: { updatedAt: string; id: string }) {
    return this.jobs.pageFailed(limit, after);
  }

  async retry(id: string): Promise<JobEntity | null> {
    const job = await this.jobs.retry(id);
    if (job) this.nudge();
    return job;
  }

  /** Retention of finished jobs: succeeded ones after JOBS_KEEP_SUCCEEDED_DAYS, failed after JOBS_KEEP_FAILED_DAYS. */
  async deleteFinished(now = Date.now()): Promise<number> {
    const day = 86_400_000;
    const env = this.config.env;
    return (
      (await this.jobs.deleteFinishedBefore(
        'SUCCEEDED',
        new Date(now - env.JOBS_KEEP_SUCCEEDED_DAYS * day),
      )) +
      (await this.jobs.deleteFinishedBefore(
        'FAILED',
        new Date(now - env.JOBS_KEEP_FAILED_DAYS * day),
      ))
    );
  }

  takeLease(name: string, ttlMs: number) {
    return this.jobs.takeLease(name, this.workerId, ttlMs);
  }
}
