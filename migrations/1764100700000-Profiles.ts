import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The member's own profile: one consent row per user and one row per filled-in field (a
 * relationship is a field per legacy), each with its own vector under the `profile` kind.
 * Entries are deleted outright, never soft: revoking consent must leave nothing behind, and
 * leaving a legacy takes the relationship to it.
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
    // A vector written late (the sweeper embeds outside any transaction) must not bring back a
    // trace of an entry deleted meanwhile, nor be written without consent. FOR SHARE waits for
    // a change of consent under way (it holds the profile row), then looks again.
    await q.query(`
      CREATE FUNCTION profile_embedding_guard() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM profiles p WHERE p.user_id = NEW.user_id AND p.consent FOR SHARE;
        IF NOT FOUND THEN RETURN NULL; END IF;
        PERFORM 1 FROM profile_entries e WHERE e.id = NEW.item_id AND e.user_id = NEW.user_id;
        IF NOT FOUND THEN RETURN NULL; END IF;
        RETURN NEW;
      END $$`);
    await q.query(
      `CREATE TRIGGER embeddings_profile_guard BEFORE INSERT ON embeddings
         FOR EACH ROW WHEN (NEW.kind = 'profile') EXECUTE FUNCTION profile_embedding_guard()`,
    );
    // A relationship is only to a legacy the member is in: leaving or being removed takes it.
    await q.query(`
      CREATE FUNCTION profile_relationship_forget() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM profile_entries
         WHERE user_id = OLD.user_id AND legacy_id = OLD.legacy_id AND field = 'relationship';
        RETURN OLD;
      END $$`);
    await q.query(
      `CREATE TRIGGER legacy_members_forget_profile_relationship AFTER DELETE ON legacy_members
         FOR EACH ROW EXECUTE FUNCTION profile_relationship_forget()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER embeddings_profile_guard ON embeddings`);
    await q.query(`DROP FUNCTION profile_embedding_guard`);
    await q.query(`DROP TRIGGER legacy_members_forget_profile_relationship ON legacy_members`);
    await q.query(`DROP FUNCTION profile_relationship_forget`);
    await q.query(`DELETE FROM embeddings WHERE kind = 'profile'`);
    await q.query(`DROP TABLE profile_entries`);
    await q.query(`DROP TABLE profiles`);
  }
}
