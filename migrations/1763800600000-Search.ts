import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search over turns: `message_segments` holds each turn split into chunks (code blocks whole),
 * with the end of the preceding turn as context; per-conversation full-text statistics give
 * BM25 its document frequencies without scanning; `retrieval_metrics` has one row per context
 * assembly or recall, without message text.
 *
 * Segments follow the searchable-table contract (content, search_tsv with a GIN index, a trigram
 * index on content, vectors in `embeddings` as kind `segment`), except that search_tsv uses the
 * `english` configuration (stemming, stop words) and weighs the preceding turn's words 'D'.
 */
export class Search1763800600000 implements MigrationInterface {
  name = 'Search1763800600000';

  async up(q: QueryRunner): Promise<void> {
    // Words counted the way full-text search sees them (stop words dropped), for BM25 lengths.
    await q.query(`
      CREATE FUNCTION search_word_count(doc tsvector) RETURNS integer
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer
          FROM unnest(doc) AS u
      $$`);

    await q.query(`
      CREATE TABLE message_segments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        turn_index integer NOT NULL,
        position integer NOT NULL CHECK (position >= 0),
        role text NOT NULL,
        speaker text,
        caption text,
        context text,
        content text NOT NULL CHECK (length(btrim(content)) > 0),
        is_code boolean NOT NULL DEFAULT false,
        language text,
        char_start integer NOT NULL,
        char_end integer NOT NULL,
        token_count integer NOT NULL CHECK (token_count >= 0),
        occurred_at timestamptz NOT NULL,
        main_length integer NOT NULL DEFAULT 0,
        context_length integer NOT NULL DEFAULT 0,
        search_tsv tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', coalesce(speaker, '') || ' ' || content || ' ' || coalesce(caption, '')), 'A')
          || setweight(to_tsvector('english', coalesce(context, '')), 'D')
        ) STORED,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT message_segments_position_unique UNIQUE (message_id, position)
      )`);
    await q.query(
      `CREATE INDEX message_segments_conversation_idx ON message_segments (conversation_id, turn_index, position)`,
    );
    await q.query(
      `CREATE INDEX message_segments_owner_idx ON message_segments (legacy_id, user_id, occurred_at)`,
    );
    await q.query(
      `CREATE INDEX message_segments_search_tsv_idx ON message_segments USING gin (search_tsv)`,
    );
    await q.query(
      `CREATE INDEX message_segments_content_trgm_idx ON message_segments USING gin (content gin_trgm_ops)`,
    );
    await q.query(
      `CREATE TRIGGER message_segments_forget_vectors AFTER DELETE ON message_segments
         FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('segment')`,
    );

    // Document frequencies per conversation: a scope's BM25 statistics are the sum over its
    // conversations. Deleting a conversation deletes its statistics with its segments.
    await q.query(`
      CREATE TABLE search_term_stats (
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        lexeme text NOT NULL,
        df integer NOT NULL CHECK (df >= 0),
        PRIMARY KEY (conversation_id, lexeme)
      )`);
    await q.query(`
      CREATE TABLE search_doc_stats (
        conversation_id uuid PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        segments integer NOT NULL CHECK (segments >= 0),
        main_length bigint NOT NULL,
        context_length bigint NOT NULL
      )`);

    await q.query(`
      CREATE TABLE retrieval_metrics (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        created_at timestamptz NOT NULL DEFAULT now(),
        operation text NOT NULL CHECK (operation IN ('REPLY', 'CONTEXT', 'RECALL', 'DEBUG')),
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        legacy_id uuid REFERENCES legacies(id) ON DELETE CASCADE,
        conversation_id uuid REFERENCES conversations(id) ON DELETE SET NULL,
        hybrid boolean NOT NULL,
        fusion text NOT NULL,
        hits_dense integer NOT NULL DEFAULT 0,
        hits_lexical integer NOT NULL DEFAULT 0,
        hits_trigram integer NOT NULL DEFAULT 0,
        hits_time integer NOT NULL DEFAULT 0,
        hits_segment integer NOT NULL DEFAULT 0,
        hits_summary integer NOT NULL DEFAULT 0,
        hits_fact integer NOT NULL DEFAULT 0,
        hits_memory integer NOT NULL DEFAULT 0,
        good_hits integer NOT NULL DEFAULT 0,
        fallback boolean NOT NULL DEFAULT false,
        widened boolean NOT NULL DEFAULT false,
        widen_reason text,
        time_filtered boolean NOT NULL DEFAULT false,
        degraded text[] NOT NULL DEFAULT '{}',
        failed_stage text,
        items integer NOT NULL DEFAULT 0,
        items_by_source jsonb NOT NULL DEFAULT '{}'::jsonb,
        tokens integer NOT NULL DEFAULT 0,
        budget integer NOT NULL DEFAULT 0,
        truncated boolean NOT NULL DEFAULT false,
        embed_ms real NOT NULL DEFAULT 0,
        search_ms real NOT NULL DEFAULT 0,
        total_ms real NOT NULL DEFAULT 0,
        query_tokens integer NOT NULL DEFAULT 0,
        query_text text
      )`);
    await q.query(`CREATE INDEX retrieval_metrics_created_idx ON retrieval_metrics (created_at)`);
    await q.query(
      `CREATE INDEX retrieval_metrics_user_idx ON retrieval_metrics (user_id, created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE retrieval_metrics`);
    await q.query(`DROP TABLE search_doc_stats`);
    await q.query(`DROP TABLE search_term_stats`);
    await q.query(`DELETE FROM embeddings WHERE kind = 'segment'`);
    await q.query(`DROP TABLE message_segments`);
    await q.query(`DROP FUNCTION search_word_count`);
  }
}
