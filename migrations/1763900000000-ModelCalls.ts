import { MigrationInterface, QueryRunner } from 'typeorm';

export class ModelCalls1763900000000 implements MigrationInterface {
  name = 'ModelCalls1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE model_calls (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task text NOT NULL,
        model text NOT NULL,
        prompt_version text,
        prompt_tokens integer NOT NULL CHECK (prompt_tokens >= 0),
        completion_tokens integer NOT NULL CHECK (completion_tokens >= 0),
        usage_estimated boolean NOT NULL DEFAULT false,
        duration_ms integer NOT NULL CHECK (duration_ms >= 0),
        attempts integer NOT NULL CHECK (attempts >= 0),
        ok boolean NOT NULL,
        error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Cost and latency reports read by time, per task and model.
    await q.query(`CREATE INDEX model_calls_created_idx ON model_calls (created_at)`);
    await q.query(
      `CREATE INDEX model_calls_task_model_idx ON model_calls (task, model, created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE model_calls`);
  }
}
