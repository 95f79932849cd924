import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The RESTORED history entry written when a fact's superseder goes carries the fact's shared
 * mention count again (FactRemovalPrivacy redefined the trigger without it, so the family saw 0
 * mentions on such entries), and says what is true of every way a fact goes (a purge as well as
 * a removed story or conversation). Entries written meanwhile take the fact's count as it is now.
 */
export class FactReleaseSharedCount1764101100000 implements MigrationInterface {
  name = 'FactReleaseSharedCount1764101100000';

  async up(q: QueryRunner): Promise<void> {
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
    await q.query(`
      UPDATE fact_history h SET shared_mention_count = f.shared_mention_count
        FROM facts f
       WHERE f.id = h.fact_id AND h.action = 'RESTORED' AND h.shared_mention_count = 0
         AND f.shared_mention_count > 0`);
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
             status, mention_count, 0, 'The fact that superseded it was removed with the story or conversation it came from.'
        FROM released;
      UPDATE facts SET superseded_by = NULL, updated_at = now() WHERE superseded_by = OLD.id;
      RETURN OLD;
    END $$`);
  }
}
