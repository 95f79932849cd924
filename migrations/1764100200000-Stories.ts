import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stories written in the app and documents uploaded to a legacy (text, Markdown, PDF, DOCX):
 * the story, its pages, its original file, and its chunks for search (full text, trigrams,
 * vectors in `embeddings` with kind `story`).
 */
export class Stories1764100200000 implements MigrationInterface {
  name = 'Stories1764100200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE stories (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title text NOT NULL CHECK (length(btrim(title)) > 0),
        kind text NOT NULL CHECK (kind IN ('STORY', 'DOCUMENT')),
        format text NOT NULL CHECK (format IN ('TEXT', 'MARKDOWN', 'PDF', 'DOCX')),
        visibility text NOT NULL DEFAULT 'PRIVATE' CHECK (visibility IN ('PRIVATE', 'SHARED')),
        status text NOT NULL DEFAULT 'PROCESSING' CHECK (status IN ('PROCESSING', 'READY', 'FAILED')),
        failure_reason text,
        -- The text, page by page: [{ "number": 1, "text": "..." }, ...].
        pages jsonb NOT NULL,
        page_count integer NOT NULL CHECK (page_count >= 0),
        size_bytes integer NOT NULL CHECK (size_bytes >= 0),
        file_name text,
        mime_type text,
        occurred_at timestamptz,
        total_chunks integer NOT NULL DEFAULT 0,
        indexed_chunks integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
      )`);
    await q.query(
      `CREATE INDEX stories_legacy_idx ON stories (legacy_id, created_at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX stories_author_idx ON stories (author_id)`);
    // Kept apart so that listing stories never reads the files.
    await q.query(`
      CREATE TABLE story_files (
        story_id uuid PRIMARY KEY REFERENCES stories(id) ON DELETE CASCADE,
        content bytea NOT NULL
      )`);
    await q.query(`
      CREATE TABLE story_chunks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        story_id uuid NOT NULL REFERENCES stories(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        ordinal integer NOT NULL,
        page integer NOT NULL,
        char_start integer NOT NULL,
        char_end integer NOT NULL,
        heading text,
        content text NOT NULL,
        token_count integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        search_tsv tsvector GENERATED ALWAYS AS
          (to_tsvector('simple', coalesce(heading, '') || ' ' || content)) STORED,
        CONSTRAINT story_chunks_ordinal_unique UNIQUE (story_id, ordinal)
      )`);
    await q.query(`CREATE INDEX story_chunks_legacy_idx ON story_chunks (legacy_id, story_id)`);
    await q.query(`CREATE INDEX story_chunks_tsv_idx ON story_chunks USING gin (search_tsv)`);
    await q.query(
      `CREATE INDEX story_chunks_trgm_idx ON story_chunks USING gin (content gin_trgm_ops)`,
    );
    await q.query(
      `CREATE TRIGGER story_chunks_forget_embeddings AFTER DELETE ON story_chunks
         FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('story')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE story_chunks`);
    await q.query(`DROP TABLE story_files`);
    await q.query(`DROP TABLE stories`);
    await q.query(`DELETE FROM embeddings WHERE kind = 'story'`);
  }
}
