import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleted facts are now purged after FACT_PURGE_AFTER, which also releases what they superseded:
 * the released fact's history says so without naming a conversation, and the entry is the
 * author's alone (history entries marked PRIVATE are) unless the family could see the fact that
 * went: otherwise it would tell them a private or deleted fact had existed.
 */
export class FactPurge1764000110000 implements MigrationInterface {
  name = 'FactPurge1764000110000';

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
             CASE WHEN OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED'
                  THEN visibility ELSE 'PRIVATE' END,
             status, mention_count, shared_mention_count, 'The fact that superseded it was removed.'
        FROM released;
      UPDATE facts SET superseded_by = NULL, updated_at = now() WHERE superseded_by = OLD.id;
      RETURN OLD;
    END $$`);
    await q.query(`CREATE INDEX facts_purge_idx ON facts (deleted_at) WHERE status = 'DELETED'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX facts_purge_idx`);
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
             CASE WHEN OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED'
                  THEN visibility ELSE 'PRIVATE' END,
             status, mention_count, shared_mention_count, 'The fact that superseded it was removed with its conversation.'
        FROM released;
      UPDATE facts SET superseded_by = NULL, updated_at = now() WHERE superseded_by = OLD.id;
      RETURN OLD;
    END $$`);
  }
}
