import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The member's own profile: one consent row per user and one row per filled-in field (a
 * relationship is a field per legacy), each with its own vector under the `profile` kind.
 * Entries are deleted outright, never soft: revoking consent must leave nothing behind.
 */
export class Profiles1764100700000 implements MigrationInterface {
  name = 'Profiles1764100700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE profiles (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        consent boolean NOT NULL DEFAULT false,
        consent_changed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE profile_entries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        field text NOT NULL CHECK (field IN ('preferredName', 'pronouns', 'birthday', 'homeTown',
          'relationship', 'languages', 'interests', 'conversationGoals', 'notes')),
        legacy_id uuid REFERENCES legacies(id) ON DELETE CASCADE,
        value jsonb NOT NULL,
        text text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT profile_entries_legacy_check CHECK ((field = 'relationship') = (legacy_id IS NOT NULL)),
        CONSTRAINT profile_entries_unique UNIQUE NULLS NOT DISTINCT (user_id, field, legacy_id)
      )`);
    await q.query(
      `CREATE TRIGGER profile_entries_forget_embeddings AFTER DELETE ON profile_entries
         FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('profile')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM embeddings WHERE kind = 'profile'`);
    await q.query(`DROP TABLE profile_entries`);
    await q.query(`DROP TABLE profiles`);
  }
}
