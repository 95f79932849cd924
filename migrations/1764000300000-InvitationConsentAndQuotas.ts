import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invitations expire and are answered by the invitee; a user's conversations are found across
 * legacies; quota_events counts what a user or a
 * legacy did in a time window (invitations sent, conversations started, imports), across
 * instances and whatever was deleted since.
 */
export class InvitationConsentAndQuotas1764000300000 implements MigrationInterface {
  name = 'InvitationConsentAndQuotas1764000300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE legacy_invitations ADD COLUMN expires_at timestamptz`);
    await q.query(`UPDATE legacy_invitations SET expires_at = created_at + interval '14 days'`);
    await q.query(`ALTER TABLE legacy_invitations ALTER COLUMN expires_at SET NOT NULL`);
    // Members of a legacy are counted with its pending invitations.
    await q.query(
      `CREATE INDEX legacy_invitations_legacy_expires_idx ON legacy_invitations (legacy_id, expires_at)`,
    );
    // Legacies a user owns are counted by user.
    await q.query(
      `CREATE INDEX legacy_members_owner_idx ON legacy_members (user_id) WHERE role = 'OWNER'`,
    );
    // A user's conversations across legacies (those left behind in legacies they left).
    await q.query(
      `CREATE INDEX conversations_user_activity_idx ON conversations (user_id, last_activity_at DESC, id DESC)`,
    );
    await q.query(`
      CREATE TABLE quota_events (
        id bigserial PRIMARY KEY,
        scope text NOT NULL,
        subject_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX quota_events_subject_idx ON quota_events (scope, subject_id, created_at)`,
    );
    await q.query(`CREATE INDEX quota_events_created_idx ON quota_events (scope, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE quota_events`);
    await q.query(`DROP INDEX conversations_user_activity_idx`);
    await q.query(`DROP INDEX legacy_members_owner_idx`);
    await q.query(`DROP INDEX legacy_invitations_legacy_expires_idx`);
    await q.query(`ALTER TABLE legacy_invitations DROP COLUMN expires_at`);
  }
}
