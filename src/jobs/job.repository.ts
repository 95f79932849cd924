import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { JobEntity, JobStatus } from './job.entity.js';
import { affected, empty, raw, run, sql } from '../database/sql.js';

const COLUMNS = raw(`id, type, key, payload, status, attempts, max_attempts AS "maxAttempts",
  run_at AS "runAt", locked_by AS "lockedBy", locked_until AS "lockedUntil",
  last_error AS "lastError", created_at AS "createdAt", updated_at AS "updatedAt",
  finished_at AS "finishedAt"`);

/** What `requeueInterrupted` did with the jobs it found stopped. */
export interface InterruptedJobs {
  requeued: number;
  merged: number;
  failed: number;
}

/** pg_advisory_xact_lock key of the interrupted-job reaper ('KSRQ'). */
const REAP_LOCK = 0x4b535251;

export interface NewJob {
  type: string;
  key: string;
  payload: Record<string, unknown>;
  runAt?: Date;
  maxAttempts: number;
}

@Injectable()
export class JobRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Coalesces into a PENDING job with the same key; returns whether a row was added. */
  async enqueue(job: NewJob, manager?: EntityManager): Promise<boolean> {
    const rows: unknown[] = await run(
      this.m(manager),
      sql`INSERT INTO jobs (type, key, payload, run_at, max_attempts)
       VALUES (${job.type}, ${job.key},
         ${JSON.stringify(job.payload)}, COALESCE(${job.runAt ?? null}, now()), ${job.maxAttempts})
       ON CONFLICT (type, key) WHERE status = 'PENDING' DO NOTHING
       RETURNING id`,
    );
    return rows.length > 0;
  }

  /** Adds the job unless one with this key ever existed (for work that must happen once). */
  async enqueueOnce(job: NewJob, manager?: EntityManager): Promise<boolean> {
    const rows: unknown[] = await run(
      this.m(manager),
      sql`INSERT INTO jobs (type, key, payload, run_at, max_attempts)
       SELECT ${job.type}, ${job.key},
         ${JSON.stringify(job.payload)}, COALESCE(${job.runAt ?? null}, now()), ${job.maxAttempts}
        WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE type = ${job.type} AND key = ${job.key})
       ON CONFLICT (type, key) WHERE status = 'PENDING' DO NOTHING
       RETURNING id`,
    );
    return rows.length > 0;
  }

  /**
   * Writes a job already FAILED, with its error, for work set aside rather than tried again
   * (a summary range the model cannot do): an operator sees it in failedJobs and retryJob
   * runs it. Nothing is written if a job of that key is pending or failed already.
   */
  async insertFailed(
    job: Omit<NewJob, 'runAt'>,
    error: string,
    manager?: EntityManager,
  ): Promise<boolean> {
    const rows: unknown[] = await run(
      this.m(manager),
      sql`INSERT INTO jobs (type, key, payload, max_attempts, attempts, status, last_error, finished_at)
       SELECT ${job.type}, ${job.key}, ${JSON.stringify(job.payload)}, ${job.maxAttempts}, 0,
              'FAILED', ${error.slice(0, 2000)}, now()
        WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE type = ${job.type} AND key = ${job.key}
                                              AND status IN ('PENDING', 'RUNNING', 'FAILED'))
       RETURNING id`,
    );
    return rows.length > 0;
  }

  /**
   * Claims due PENDING jobs. SKIP LOCKED lets several workers claim without waiting on each other.
   * A job whose worker died is not claimed here: `requeueInterrupted` hands it back first.
   */
  async claim(
    worker: string,
    limit: number,
    leaseMs: number,
    types: readonly string[],
  ): Promise<JobEntity[]> {
    const rows = await run<JobEntity>(
      this.m(),
      sql`UPDATE jobs SET status = 'RUNNING', attempts = attempts + 1, locked_by = ${worker},
              locked_until = now() + (${String(leaseMs)} || ' milliseconds')::interval, updated_at = now()
        WHERE id IN (
          SELECT id FROM jobs
           WHERE type = ANY(${types}::text[]) AND status = 'PENDING' AND run_at <= now()
           ORDER BY run_at, created_at
           LIMIT ${limit}
           FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
    );
    return rows;
  }

  /** Whether a job of these types other than `except` is due and waiting to be claimed. */
  async othersWaiting(types: readonly string[], except: string): Promise<boolean> {
    const rows = await run(
      this.m(),
      sql`SELECT 1 FROM jobs
        WHERE type = ANY(${types}::text[]) AND status = 'PENDING' AND run_at <= now()
          AND id <> ${except}
        LIMIT 1`,
    );
    return rows.length > 0;
  }

  /** Extends a running job's lease; false when this worker no longer holds it. */
  async renewLease(id: string, worker: string, leaseMs: number): Promise<boolean> {
    const rows = await run(
      this.m(),
      sql`UPDATE jobs SET locked_until = now() + (${String(leaseMs)} || ' milliseconds')::interval
        WHERE id = ${id} AND locked_by = ${worker} AND status = 'RUNNING' RETURNING id`,
    );
    return rows.length > 0;
  }

  async succeed(id: string, worker: string): Promise<void> {
    await run(
      this.m(),
      sql`UPDATE jobs SET status = 'SUCCEEDED', finished_at = now(), updated_at = now(),
              locked_by = NULL, locked_until = NULL, last_error = NULL
        WHERE id = ${id} AND locked_by = ${worker}`,
    );
  }

  /**
   * Schedules a retry, or keeps the job as FAILED after its last attempt. If an identical job
   * is already waiting, the retry coalesces into it.
   */
  async fail(
    job: JobEntity,
    worker: string,
    error: string,
    retryInMs: number | null,
    countAttempt = true,
  ): Promise<JobStatus> {
    const status = retryInMs === null ? JobStatus.FAILED : JobStatus.PENDING;
    return this.dataSource.transaction(async (m) => {
      if (status === JobStatus.PENDING) {
        const twin: unknown[] = await run(
          m,
          sql`SELECT 1 FROM jobs WHERE type = ${job.type} AND key = ${job.key} AND status = 'PENDING' AND id <> ${job.id}`,
        );
        if (twin.length > 0) {
          await run(m, sql`DELETE FROM jobs WHERE id = ${job.id} AND locked_by = ${worker}`);
          return JobStatus.PENDING;
        }
      }
      await run(
        m,
        sql`UPDATE jobs SET status = ${status}, last_error = ${error.slice(0, 2000)}, updated_at = now(),
                run_at = CASE WHEN ${retryInMs}::bigint IS NULL THEN run_at
                              ELSE now() + (${retryInMs}::bigint || ' milliseconds')::interval END,
                attempts = attempts - CASE WHEN ${countAttempt} THEN 0 ELSE 1 END,
                finished_at = CASE WHEN ${status} = 'FAILED' THEN now() ELSE NULL END,
                locked_by = NULL, locked_until = NULL
          WHERE id = ${job.id} AND locked_by = ${worker}`,
      );
      return status;
    });
  }

  /**
   * Jobs whose worker stopped holding them: every RUNNING job (`all`, at the boot of the only
   * process on an embedded database) or those whose lease ran out (`expired`, a dead instance's
   * on a server). Each goes back to PENDING, unless a twin with its key already waits (it is
   * merged into the twin, which does the same work: at most one PENDING job per key) or its
   * attempts are spent (kept FAILED, so a job that kills its process cannot do so for ever).
   * One transaction under an advisory lock, so instances reaping at once never collide.
   */
  async requeueInterrupted(scope: 'all' | 'expired'): Promise<InterruptedJobs> {
    const stale = scope === 'all' ? sql`TRUE` : sql`locked_until < now()`;
    return this.dataSource.transaction(async (m) => {
      await run(m, sql`SELECT pg_advisory_xact_lock(${REAP_LOCK})`);
      const failed = await affected(
        m,
        sql`UPDATE jobs SET status = 'FAILED', finished_at = now(), updated_at = now(),
                locked_by = NULL, locked_until = NULL,
                last_error = 'Stopped ' || attempts || ' times while it ran (the process was killed or lost its database); not tried again.'
          WHERE status = 'RUNNING' AND ${stale} AND attempts >= max_attempts`,
      );
      // The newest interrupted job of a key stays (its payload is the latest); the others, and
      // every one with a waiting twin, merge.
      const merged = await affected(
        m,
        sql`DELETE FROM jobs j
          WHERE j.status = 'RUNNING' AND ${stale}
            AND (EXISTS (SELECT 1 FROM jobs p
                          WHERE p.type = j.type AND p.key = j.key AND p.status = 'PENDING')
                 OR EXISTS (SELECT 1 FROM jobs r
                             WHERE r.type = j.type AND r.key = j.key AND r.status = 'RUNNING'
                               AND ${scope === 'all' ? sql`TRUE` : sql`r.locked_until < now()`}
                               AND (r.created_at, r.id) > (j.created_at, j.id)))`,
      );
      const requeued = await affected(
        m,
        sql`UPDATE jobs SET status = 'PENDING', locked_by = NULL, locked_until = NULL,
                updated_at = now()
          WHERE status = 'RUNNING' AND ${stale}`,
      );
      return { requeued, merged, failed };
    });
  }

  findById(id: string): Promise<JobEntity | null> {
    return run<JobEntity>(this.m(), sql`SELECT ${COLUMNS} FROM jobs WHERE id = ${id}`).then(
      (rows) => rows[0] ?? null,
    );
  }

  pageFailed(limit: number, after?: { updatedAt: string; id: string }): Promise<JobEntity[]> {
    const cursor = after
      ? sql`AND (updated_at, id) < (${after.updatedAt}::timestamptz, ${after.id}::uuid)`
      : empty;
    return run(
      this.m(),
      sql`SELECT ${COLUMNS} FROM jobs WHERE status = 'FAILED' ${cursor}
        ORDER BY updated_at DESC, id DESC LIMIT ${limit}`,
    );
  }

  /** A failed job back to PENDING with a fresh set of attempts. */
  async retry(id: string): Promise<JobEntity | null> {
    const [row] = await run<JobEntity>(
      this.m(),
      sql`UPDATE jobs SET status = 'PENDING', attempts = 0, run_at = now(), updated_at = now(),
              finished_at = NULL
        WHERE id = ${id} AND status = 'FAILED'
          AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.type = jobs.type AND j.key = jobs.key
                                                 AND j.status = 'PENDING')
        RETURNING ${COLUMNS}`,
    );
    return row ?? null;
  }

  /** Jobs running, or pending and due within `horizonMs`. */
  async countUnsettled(types: readonly string[], horizonMs: number): Promise<number> {
    const rows: { n: string }[] = await run(
      this.m(),
      sql`SELECT count(*) AS n FROM jobs
        WHERE type = ANY(${types}::text[])
          AND ((status = 'PENDING' AND run_at <= now() + (${String(horizonMs)} || ' milliseconds')::interval)
               OR status = 'RUNNING')`,
    );
    return Number(rows[0].n);
  }

  async deleteFinishedBefore(status: 'SUCCEEDED' | 'FAILED', before: Date): Promise<number> {
    const rows = await run(
      this.m(),
      sql`DELETE FROM jobs WHERE status = ${status} AND finished_at < ${before} RETURNING id`,
    );
    return rows.length;
  }

  /** Takes or renews a named lease; true when this holder has it. */
  async takeLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const rows: { holder: string }[] = await run(
      this.m(),
      sql`INSERT INTO scheduler_leases (name, holder, expires_at)
       VALUES (${name}, ${holder}, now() + (${String(ttlMs)} || ' milliseconds')::interval)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE scheduler_leases.expires_at < now() OR scheduler_leases.holder = EXCLUDED.holder
       RETURNING holder`,
    );
    return rows.length > 0 && rows[0].holder === holder;
  }
}
