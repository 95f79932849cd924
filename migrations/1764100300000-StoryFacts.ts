import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Facts found in stories: a fact's mention can be a passage of a story (its page), and deleting
 * the story (or rewriting its text) takes those mentions with it, and the facts that had no
 * other. Each passage records when facts were last extracted from it, so extraction resumes.
 */
export class StoryFacts1764100300000 implements MigrationInterface {
  name = 'StoryFacts1764100300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE fact_sources DROP CONSTRAINT fact_sources_kind_check`);
    await q.query(`
      ALTER TABLE fact_sources
        ADD CONSTRAINT fact_sources_kind_check CHECK (kind IN ('CONVERSATION', 'MANUAL', 'STORY')),
        ADD COLUMN story_id uuid REFERENCES stories(id) ON DELETE CASCADE,
        ADD COLUMN story_chunk_id uuid REFERENCES story_chunks(id) ON DELETE CASCADE,
        ADD COLUMN page integer,
        ADD CONSTRAINT fact_sources_story_check
          CHECK ((kind = 'STORY') = (story_id IS NOT NULL AND story_chunk_id IS NOT NULL))`);
    await q.query(
      `CREATE UNIQUE INDEX fact_sources_story_chunk_unique ON fact_sources (fact_id, story_chunk_id)
         WHERE story_chunk_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX fact_sources_story_idx ON fact_sources (story_chunk_id) WHERE story_chunk_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX fact_sources_story_id_idx ON fact_sources (story_id) WHERE story_id IS NOT NULL`,
    );
    await q.query(`ALTER TABLE story_chunks ADD COLUMN facts_extracted_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE story_chunks DROP COLUMN facts_extracted_at`);
    await q.query(`DELETE FROM fact_sources WHERE kind = 'STORY'`);
    await q.query(`
      ALTER TABLE fact_sources DROP CONSTRAINT fact_sources_story_check,
        DROP COLUMN page, DROP COLUMN story_chunk_id, DROP COLUMN story_id,
        DROP CONSTRAINT fact_sources_kind_check,
        ADD CONSTRAINT fact_sources_kind_check CHECK (kind IN ('CONVERSATION', 'MANUAL'))`);
  }
}
