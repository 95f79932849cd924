import type { SqlDefinitions } from '../database/sql-definitions.js';

/**
 * The triggers that keep facts consistent in the database: a deleted fact releases what it
 * superseded, a fact goes with its last source, and the family's view of a shared fact
 * (shared_confidence, shared_updated_at; read through fact-visibility.ts) moves only with a
 * change they can see.
 */
export const FACT_SQL: SqlDefinitions = {
  functions: {
    facts_release_superseded: `CREATE OR REPLACE FUNCTION facts_release_superseded()
      RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      WITH released AS (
        UPDATE facts f
           SET status = 'ACTIVE', valid_to = NULL, superseded_by = NULL, updated_at = now(), shared_updated_at = CASE WHEN OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED'
                                THEN now() ELSE f.shared_updated_at END
         WHERE f.superseded_by = OLD.id AND f.status = 'SUPERSEDED'
           AND NOT EXISTS (SELECT 1 FROM facts a
                            WHERE a.legacy_id = f.legacy_id AND a.author_id = f.author_id
                              AND a.normalized = f.normalized AND a.status = 'ACTIVE')
        RETURNING f.*)
      INSERT INTO fact_history (fact_id, action, content, category, visibility, status,
                                mention_count, shared_mention_count, detail)
      SELECT id, 'RESTORED', content, category,
             -- The family never saw a supersession by a fact they could not see: nor its end.
             CASE WHEN OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED'
                  THEN visibility ELSE 'PRIVATE' END,
             status, mention_count, shared_mention_count, 'The fact that superseded it was removed.'
        FROM released;
      UPDATE facts SET superseded_by = NULL, updated_at = now() WHERE superseded_by = OLD.id;
      RETURN OLD;
    END $$`,
    fact_sources_forget: `CREATE OR REPLACE FUNCTION fact_sources_forget()
      RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE remaining integer;
      BEGIN
        SELECT count(*) INTO remaining FROM fact_sources WHERE fact_id = OLD.fact_id;
        IF remaining = 0 THEN
          DELETE FROM facts WHERE id = OLD.fact_id;
        ELSE
          -- Its first source is now the earliest mention left.
          UPDATE facts f
             SET mention_count = remaining, source_conversation_id = s.conversation_id,
                 source_range_start = s.range_start, source_range_end = s.range_end,
                 source_message_ids = s.message_ids, updated_at = now()
            FROM (SELECT conversation_id, range_start, range_end, message_ids
                    FROM fact_sources WHERE fact_id = OLD.fact_id
                   ORDER BY occurred_at, created_at, id LIMIT 1) s
           WHERE f.id = OLD.fact_id;
        END IF;
        RETURN OLD;
      END $$`,
    facts_family_view: `CREATE OR REPLACE FUNCTION facts_family_view()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          NEW.shared_confidence := NEW.confidence;
          NEW.shared_updated_at := NEW.updated_at;
          RETURN NEW;
        END IF;
        -- The family learns the confidence when the fact is shared; a recount of a shared
        -- fact sets theirs itself (FactRepository.recountMentions).
        IF NEW.visibility = 'SHARED' AND OLD.visibility <> 'SHARED' THEN
          NEW.shared_confidence := NEW.confidence;
        END IF;
        -- A change they can see: what it says, who sees it, its count or confidence as they see
        -- them, a delete or restore, a status change other than a supersession, or a
        -- supersession by (or release from) a fact they can see.
        IF NEW.content <> OLD.content OR NEW.category <> OLD.category
           OR NEW.visibility <> OLD.visibility
           OR NEW.shared_mention_count <> OLD.shared_mention_count
           OR NEW.shared_confidence <> OLD.shared_confidence
           OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
           OR (NEW.status <> OLD.status AND 'SUPERSEDED' NOT IN (NEW.status, OLD.status))
           OR (NEW.superseded_by IS DISTINCT FROM OLD.superseded_by AND EXISTS (
                 SELECT 1 FROM facts s
                  WHERE s.id IN (NEW.superseded_by, OLD.superseded_by)
                    AND s.visibility = 'SHARED' AND s.status <> 'DELETED'))
        THEN
          NEW.shared_updated_at := NEW.updated_at;
        END IF;
        RETURN NEW;
      END $$`,
    facts_superseder_seen: `CREATE OR REPLACE FUNCTION facts_superseder_seen()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (NEW.visibility = 'SHARED' AND NEW.status <> 'DELETED')
           IS DISTINCT FROM (OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED') THEN
          UPDATE facts SET shared_updated_at = NEW.updated_at
           WHERE superseded_by = NEW.id AND shared_updated_at < NEW.updated_at;
        END IF;
        RETURN NULL;
      END $$`,
  },
  triggers: {
    facts_release_superseded: `CREATE TRIGGER facts_release_superseded AFTER DELETE ON facts
      FOR EACH ROW EXECUTE FUNCTION facts_release_superseded()`,
    fact_sources_forget: `CREATE TRIGGER fact_sources_forget AFTER DELETE ON fact_sources
      FOR EACH ROW EXECUTE FUNCTION fact_sources_forget()`,
    facts_family_view: `CREATE TRIGGER facts_family_view BEFORE INSERT OR UPDATE ON facts
      FOR EACH ROW EXECUTE FUNCTION facts_family_view()`,
    facts_superseder_seen: `CREATE TRIGGER facts_superseder_seen
      AFTER UPDATE OF visibility, status ON facts
      FOR EACH ROW EXECUTE FUNCTION facts_superseder_seen()`,
  },
};
