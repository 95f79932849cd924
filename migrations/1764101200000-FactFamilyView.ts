import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What other members see of a shared fact's confidence and last change: the values as of the
 * last change they could see. A private restatement raised `confidence` and moved `updated_at`,
 * and removing a private conversation or superseder moved `updated_at` too: shown as they are,
 * both told the family when and how strongly the author spoke of the fact in private. A trigger
 * keeps the family's values, so no write path has to remember them.
 */
export class FactFamilyView1764101200000 implements MigrationInterface {
  name = 'FactFamilyView1764101200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE facts ADD COLUMN shared_confidence real, ADD COLUMN shared_updated_at timestamptz`,
    );
    await q.query(
      `UPDATE facts SET shared_confidence = confidence, shared_updated_at = updated_at`,
    );
    await q.query(`ALTER TABLE facts ALTER COLUMN shared_confidence SET NOT NULL,
                     ALTER COLUMN shared_updated_at SET NOT NULL`);
    await q.query(`
      CREATE OR REPLACE FUNCTION facts_family_view() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          NEW.shared_confidence := NEW.confidence;
          NEW.shared_updated_at := NEW.updated_at;
          RETURN NEW;
        END IF;
        -- The family learns the confidence when the fact is shared, and with a recount they
        -- are told of (its shared mention count changes only then).
        IF NEW.visibility = 'SHARED' AND (OLD.visibility <> 'SHARED'
             OR NEW.shared_mention_count <> OLD.shared_mention_count) THEN
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
      END $$`);
    await q.query(`CREATE TRIGGER facts_family_view BEFORE INSERT OR UPDATE ON facts
                     FOR EACH ROW EXECUTE FUNCTION facts_family_view()`);
    // A fact released when its shared superseder goes changes for the family too: the trigger
    // above cannot tell, since that superseder's row is gone by then.
    await q.query(`
    CREATE OR REPLACE FUNCTION facts_release_superseded() RETURNS trigger LANGUAGE plpgsql AS $$
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
    END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
    CREATE OR REPLACE FUNCTION facts_release_superseded() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      WITH released AS (
        UPDATE facts f
           SET status = 'ACTIVE', valid_to = NULL, superseded_by = NULL, updated_at = now()
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
    END $$`);
    await q.query(`DROP TRIGGER facts_family_view ON facts`);
    await q.query(`DROP FUNCTION facts_family_view()`);
    await q.query(`ALTER TABLE facts DROP COLUMN shared_confidence, DROP COLUMN shared_updated_at`);
  }
}
