import { MigrationInterface, QueryRunner } from 'typeorm';

/** Who looked at another user's data with platform-admin powers, when, and what (ids only). */
export class AuditLog1764000400000 implements MigrationInterface {
  name = 'AuditLog1764000400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_log (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        actor_id uuid REFERENCES users(id) ON DELETE SET NULL,
        operation text NOT NULL,
        target_user_id uuid,
        target_legacy_id uuid,
        target_conversation_id uuid,
        details jsonb NOT NULL DEFAULT '{}'::jsonb,
        -- Milliseconds, as JavaScript dates and so page cursors hold them.
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
      )`);
    // auditLog pages newest first.
    await q.query(`CREATE INDEX audit_log_created_idx ON audit_log (created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_log`);
  }
}
