import type { SqlDefinitions } from '../database/sql-definitions.js';

/**
 * A profile's vectors exist only with its owner's consent and for their own entries, and the
 * relationship a member gave goes when they leave the legacy it was about.
 */
export const PROFILE_SQL: SqlDefinitions = {
  functions: {
    profile_embedding_guard: `CREATE OR REPLACE FUNCTION profile_embedding_guard()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM profiles p WHERE p.user_id = NEW.user_id AND p.consent FOR SHARE;
        IF NOT FOUND THEN RETURN NULL; END IF;
        PERFORM 1 FROM profile_entries e WHERE e.id = NEW.item_id AND e.user_id = NEW.user_id;
        IF NOT FOUND THEN RETURN NULL; END IF;
        RETURN NEW;
      END $$`,
    profile_relationship_forget: `CREATE OR REPLACE FUNCTION profile_relationship_forget()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM profile_entries
         WHERE user_id = OLD.user_id AND legacy_id = OLD.legacy_id AND field = 'relationship';
        RETURN OLD;
      END $$`,
  },
  triggers: {
    embeddings_profile_guard: `CREATE TRIGGER embeddings_profile_guard BEFORE INSERT ON embeddings
      FOR EACH ROW WHEN (NEW.kind = 'profile') EXECUTE FUNCTION profile_embedding_guard()`,
    legacy_members_forget_profile_relationship: `CREATE TRIGGER legacy_members_forget_profile_relationship
      AFTER DELETE ON legacy_members
      FOR EACH ROW EXECUTE FUNCTION profile_relationship_forget()`,
  },
};
