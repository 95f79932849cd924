import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A shared fact that restates others took on their confidence as its author knows it (raised by
 * private restatements, or a private fact's own), and the trigger showed it to the family with
 * the recount. The recount now sets the family's confidence itself, from what they saw.
 */
export class FactRestatedFamilyConfidence1764102000000 implements MigrationInterface {
  name = 'FactRestatedFamilyConfidence1764102000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION facts_family_view() RETURNS trigger LANGUAGE plpgsql AS $$
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
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
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
  }
}
