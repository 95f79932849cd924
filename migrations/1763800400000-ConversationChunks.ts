import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rolling summaries: one chunk per summarized range of a conversation's turns. The range is
 * unique, and so is its start, so a range can never be summarized twice or overlap another.
 * Searchable-table contract: `content`, a generated `search_tsv` with a GIN index and a trigram
 * index; vectors live in `embeddings` (kind `summary`) with their HNSW index made at run time.
 */
export class ConversationChunks1763800400000 implements MigrationInterface {
  name = 'ConversationChunks1763800400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_chunks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        range_start integer NOT NULL CHECK (range_start >= 0),
        range_end integer NOT NULL,
        content text NOT NULL CHECK (length(btrim(content)) > 0),
        structured jsonb NOT NULL,
        turn_count integer NOT NULL CHECK (turn_count > 0),
        token_count integer NOT NULL CHECK (token_count >= 0),
        model text NOT NULL,
        prompt_version text,
        first_occurred_at timestamptz NOT NULL,
        last_occurred_at timestamptz NOT NULL,
        search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT conversation_chunks_range_check CHECK (range_end >= range_start),
        CONSTRAINT conversation_chunks_range_unique UNIQUE (conversation_id, range_start, range_end)
      )`);
    // Ranges never overlap: each starts where the previous one ended, so a start is taken once.
    await q.query(
      `CREATE UNIQUE INDEX conversation_chunks_start_unique ON conversation_chunks (conversation_id, range_start)`,
    );
    await q.query(
      `CREATE INDEX conversation_chunks_progress_idx ON conversation_chunks (conversation_id, range_end DESC)`,
    );
    await q.query(
      `CREATE INDEX conversation_chunks_owner_idx ON conversation_chunks (legacy_id, user_id, created_at DESC)`,
    );
    await q.query(
      `CREATE INDEX conversation_chunks_search_tsv_idx ON conversation_chunks USING gin (search_tsv)`,
    );
    await q.query(
      `CREATE INDEX conversation_chunks_content_trgm_idx ON conversation_chunks USING gin (content gin_trgm_ops)`,
    );
    // The structured summary is queryable: structured @> '{"entities": ["Rose"]}'.
    await q.query(
      `CREATE INDEX conversation_chunks_structured_idx ON conversation_chunks USING gin (structured jsonb_path_ops)`,
    );
    await q.query(
      `CREATE TRIGGER conversation_chunks_forget_vectors AFTER DELETE ON conversation_chunks
         FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('summary')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM embeddings WHERE kind = 'summary'`);
    await q.query(`DROP TABLE conversation_chunks`);
  }
}
