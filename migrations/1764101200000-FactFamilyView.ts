import { MigrationInterface, QueryRunner } from 'typeorm';
import { releaseFunction } from './1764101100000-FactReleaseSharedCount.js';

const RELEASE_DETAIL = 'The fact that superseded it was removed.';

/**
 * The trigger function keeping the family's values; `onRecount` is whether a recount also
 * copies the confidence (FactRestatedFamilyConfidence turned that off).
 */
export function familyView(onRecount: boolean): string {
  const learns = onRecount
    ? `NEW.visibility = 'SHARED' AND (OLD.visibility <> 'SHARED'
             OR NEW.shared_mention_count <> OLD.shared_mention_count)`
    : `NEW.visibility = 'SHARED' AND OLD.visibility <> 'SHARED'`;
  return `
      CREATE OR REPLACE FUNCTION facts_family_view() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          NEW.shared_confidence := NEW.confidence;
          NEW.shared_updated_at := NEW.updated_at;
          RETURN NEW;
        END IF;
        -- The family learns the confidence when the fact is shared${
          onRecount
            ? `, and with a recount they
        -- are told of (its shared mention count changes only then)`
            : `; a recount of a shared
        -- fact sets theirs itself (FactRepository.recountMentions)`
        }.
        IF ${learns} THEN
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
      END $$`;
}

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
    await q.query(familyView(true));
    await q.query(`CREATE TRIGGER facts_family_view BEFORE INSERT OR UPDATE ON facts
                     FOR EACH ROW EXECUTE FUNCTION facts_family_view()`);
    // A fact released when its shared superseder goes changes for the family too: the trigger
    // above cannot tell, since that superseder's row is gone by then.
    await q.query(releaseFunction('shared_mention_count', RELEASE_DETAIL, true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(releaseFunction('shared_mention_count', RELEASE_DETAIL));
    await q.query(`DROP TRIGGER facts_family_view ON facts`);
    await q.query(`DROP FUNCTION facts_family_view()`);
    await q.query(`ALTER TABLE facts DROP COLUMN shared_confidence, DROP COLUMN shared_updated_at`);
  }
}
