import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { JobEntity, JobStatus } from './job.entity.js';
import { SqlParams, returned } from '../database/sql-params.js';

const COLUMNS = `id, type, key, payload, status, attempts, max_attempts AS "maxAttempts",
  run_at AS "runAt", locked_by AS "lockedBy", locked_until AS "lockedUntil",
  last_error AS "lastError", created_at AS "createdAt", updated_at AS "updatedAt",
  finished_at AS "finishedAt"`;

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
    const rows: unknown[] = await this.m(manager).query(
      `INSERT INTO jobs (type, key, payload, run_at, max_attempts)
       VALUES ($1, $2, $3, COALESCE($4, now()), $5)
       ON CONFLICT (type, key) WHERE status = 'PENDING' DO NOTHING
       RETURNING id`,
      [job.type, job.key, JSON.stringify(job.payload), job.runAt ?? null, job.maxAttempts],
    );
    return rows.length > 0;
  }

  /** Adds the job unless one with this key ever existed (for work that must happen once). */
  async enqueueOnce(job: NewJob, manager?: EntityManager): Promise<boolean> {
    const rows: unknown[] = await this.m(manager).query(
      `INSERT INTO jobs (type, key, payload, run_at, max_attempts)
       SELECT $1, $2, $3, COALESCE($4, now()), $5
        WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE type = $1 AND key = $2)
       ON CONFLICT (type, key) WHERE status = 'PENDING' DO NOTHING
       RETURNING id`,
      [job.type, job.key, JSON.stringify(job.payload), job.runAt ?? null, job.maxAttempts],
    );
    return rows.length > 0;
  }

  /**
   * Claims due jobs: pending ones whose time has come, and running ones whose worker's lease
   * expired (it crashed). SKIP LOCKED lets several workers claim without waiting on each other.
   */
  async claim(
    worker: string,
    limit: number,
    leaseMs: number,
    types: readonly string[],
  ): Promise<JobEntity[]> {
    const result: unknown = await this.m().query(
      `UPDATE jobs SET status = 'RUNNING', attempts = attempts + 1, locked_by = $1,
              locked_until = now() + ($3 || ' milliseconds')::interval, updated_at = now()
        WHERE id IN (
          SELECT id FROM jobs
           WHERE type = ANY($4::text[])
             AND ((status = 'PENDING' AND run_at <= now())
              OR (status = 'RUNNING' AND locked_until < now()))
           ORDER BY run_at, created_at
           LIMIT $2
           FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
      [worker, limit, String(leaseMs), types],
    );
    return returned<JobEntity>(result);
  }

  /** Extends a running job's lease; false when this worker no longer holds it. */
  async renewLease(id: string, worker: string, leaseMs: number): Promise<boolean> {
    const result: unknown = await this.m().query(
      `UPDATE jobs SET locked_until = now() + ($3 || ' milliseconds')::interval
        WHERE id = $1 AND locked_by = $2 AND status = 'RUNNING' RETURNING id`,
      [id, worker, String(leaseMs)],
    );
    return returned(result).length > 0;
  }

  async succeed(id: string, worker: string): Promise<void> {
    await this.m().query(
      `UPDATE jobs SET status = 'SUCCEEDED', finished_at = now(), updated_at = now(),
              locked_by = NULL, locked_until = NULL, last_error = NULL
        WHERE id = $1 AND locked_by = $2`,
      [id, worker],
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
        const twin: unknown[] = await m.query(
          `SELECT 1 FROM jobs WHERE type = $1 AND key = $2 AND status = 'PENDING' AND id <> $3`,
          [job.type, job.key, job.id],
        );
        if (twin.length > 0) {
          await m.query(`DELETE FROM jobs WHERE id = $1 AND locked_by = $2`, [job.id, worker]);
          return JobStatus.PENDING;
        }
      }
      await m.query(
        `UPDATE jobs SET status = $3, last_error = $4, updated_at = now(),
                run_at = CASE WHEN $5::bigint IS NULL THEN run_at
                              ELSE now() + ($5::bigint || ' milliseconds')::interval END,
                attempts = attempts - CASE WHEN $6 THEN 0 ELSE 1 END,
                finished_at = CASE WHEN $3 = 'FAILED' THEN now() ELSE NULL END,
                locked_by = NULL, locked_until = NULL
          WHERE id = $1 AND locked_by = $2`,
        [job.id, worker, status, error.slice(0, 2000), retryInMs, countAttempt],
      );
      return status;
    });
  }

  /** After a restart of the only process on an embedded database, nothing can still be running. */
  async releaseAllRunning(): Promise<number> {
    const result: unknown = await this.m().query(
      `UPDATE jobs SET status = 'PENDING', locked_by = NULL, locked_until = NULL, updated_at = now()
        WHERE status = 'RUNNING' RETURNING id`,
    );
    return returned(result).length;
  }

  findById(id: string): Promise<JobEntity | null> {
    return this.m()
      .query(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id])
      .then((rows: JobEntity[]) => rows[0] ?? null);
  }

  pageFailed(limit: number, after?: { updatedAt: string; id: string }): Promise<JobEntity[]> {
    const p = new SqlParams();
    let where = `status = 'FAILED'`;
    if (after) {
      where += ` AND (updated_at, id) < (${p.add(after.updatedAt)}::timestamptz, ${p.add(after.id)}::uuid)`;
    }
    return this.m().query(
      `SELECT ${COLUMNS} FROM jobs WHERE ${where}
        ORDER BY updated_at DESC, id DESC LIMIT ${p.add(limit)}`,
      p.values,
    );
  }

  /** A failed job back to PENDING with a fresh set of attempts. */
  async retry(id: string): Promise<JobEntity | null> {
    const result: unknown = await this.m().query(
      `UPDATE jobs SET status = 'PENDING', attempts = 0, run_at = now(), updated_at = now(),
              finished_at = NULL
        WHERE id = $1 AND status = 'FAILED'
          AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.type = jobs.type AND j.key = jobs.key
                                                 AND j.status = 'PENDING')
        RETURNING ${COLUMNS}`,
      [id],
    );
    return returned<JobEntity>(result)[0] ?? null;
  }

  /** Jobs running, or pending and due within `horizonMs`. */
  async countUnsettled(types: readonly string[], horizonMs: number): Promise<number> {
    const rows: { n: string }[] = await this.m().query(
      `SELECT count(*) AS n FROM jobs
        WHERE type = ANY($1::text[])
          AND ((status = 'PENDING' AND run_at <= now() + ($2 || ' milliseconds')::interval)
               OR status = 'RUNNING')`,
      [types, String(horizonMs)],
    );
    return Number(rows[0].n);
  }

  async deleteFinishedBefore(status: 'SUCCEEDED' | 'FAILED', before: Date): Promise<number> {
    const result: unknown = await this.m().query(
      `DELETE FROM jobs WHERE status = $1 AND finished_at < $2 RETURNING id`,
      [status, before],
    );
    return returned(result).length;
  }

  /** Takes or renews a named lease; true when this holder has it. */
  async takeLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const rows: { holder: string }[] = await this.m().query(
      `INSERT INTO scheduler_leases (name, holder, expires_at)
       VALUES ($1, $2, now() + ($3 || ' milliseconds')::interval)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE scheduler_leases.expires_at < now() OR scheduler_leases.holder = EXCLUDED.holder
       RETURNING holder`,
      [name, holder, String(ttlMs)],
    );
    return rows.length > 0 && rows[0].holder === holder;
  }
}
