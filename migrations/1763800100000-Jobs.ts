import { MigrationInterface, QueryRunner } from 'typeorm';

export class Jobs1763800100000 implements MigrationInterface {
  name = 'Jobs1763800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        type text NOT NULL,
        key text NOT NULL,
        payload jsonb NOT NULL DEFAULT '{}'::jsonb,
        status text NOT NULL DEFAULT 'PENDING'
          CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
        attempts integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL DEFAULT 5,
        run_at timestamptz NOT NULL DEFAULT now(),
        locked_by text,
        locked_until timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    // At most one waiting job per key: enqueueing again coalesces into it.
    await q.query(
      `CREATE UNIQUE INDEX jobs_pending_key_unique ON jobs (type, key) WHERE status = 'PENDING'`,
    );
    await q.query(`CREATE INDEX jobs_due_idx ON jobs (run_at) WHERE status = 'PENDING'`);
    await q.query(`CREATE INDEX jobs_running_idx ON jobs (locked_until) WHERE status = 'RUNNING'`);
    await q.query(
      `CREATE INDEX jobs_failed_idx ON jobs (updated_at DESC, id) WHERE status = 'FAILED'`,
    );
    await q.query(`CREATE INDEX jobs_key_idx ON jobs (type, key)`);

    await q.query(`
      CREATE TABLE scheduler_leases (
        name text PRIMARY KEY,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE scheduler_leases`);
    await q.query(`DROP TABLE jobs`);
  }
}
