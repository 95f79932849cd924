import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a fact removed with its story or conversation leaves in other facts' history, for the
 * family. A history entry keeps the id of its related fact after that fact is gone: it was set
 * to NULL, and an entry with no related fact reads as one about nothing private, so another
 * member saw a supersession by a private fact once that fact was gone. A dangling id is a fact
 * no one can see, so the entry stays its author's alone. And the RESTORED entry written when a
 * private superseder goes is the author's alone too: the family never saw the supersession.
 */
export class FactRemovalPrivacy1764100500000 implements MigrationInterface {
  name = 'FactRemovalPrivacy1764100500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE fact_history DROP CONSTRAINT IF EXISTS fact_history_related_fact_id_fkey`,
    );
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
                                  mention_count, detail)
        SELECT id, 'RESTORED', content, category,
               -- The family never saw a supersession by a fact they could not see: nor its end.
               CASE WHEN OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED'
                    THEN visibility ELSE 'PRIVATE' END,
               status, mention_count,
               'The fact that superseded it was removed with the story or conversation it came from.'
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
                                  mention_count, detail)
        SELECT id, 'RESTORED', content, category, visibility, status, mention_count,
               'The fact that superseded it was removed with its conversation.'
          FROM released;
        UPDATE facts SET superseded_by = NULL, updated_at = now() WHERE superseded_by = OLD.id;
        RETURN OLD;
      END $$`);
    await q.query(
      `UPDATE fact_history h SET related_fact_id = NULL
        WHERE related_fact_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.id = h.related_fact_id)`,
    );
    await q.query(
      `ALTER TABLE fact_history ADD CONSTRAINT fact_history_related_fact_id_fkey
         FOREIGN KEY (related_fact_id) REFERENCES facts(id) ON DELETE SET NULL`,
    );
  }
}
