import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Facts about a legacy, each owned by the member who stated it, with where it was said
 * (`fact_sources`, one row per mention) and every change (`fact_history`).
 *
 * - At most one ACTIVE fact per member and legacy says the same thing (normalized text).
 * - A mention comes from a summarized range at most once (unique fact + chunk), so a range
 *   applied twice cannot raise a count twice.
 * - Deleting a conversation deletes the mentions it gave; a fact left with none is deleted
 *   (it was derived from that conversation only), and a fact it had superseded is active again.
 * - Searchable-table contract: `content`, generated `search_tsv` (GIN) and a trigram index;
 *   vectors in `embeddings` (kind `fact`), forgotten when the row is deleted.
 */
export class Facts1763800410000 implements MigrationInterface {
  name = 'Facts1763800410000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE facts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        category text NOT NULL CHECK (category IN ('PERSONALITY', 'HOBBY', 'RELATIONSHIP',
          'MILESTONE', 'OCCUPATION', 'PREFERENCE', 'HABIT', 'OTHER')),
        content text NOT NULL CHECK (length(btrim(content)) BETWEEN 1 AND 1000),
        normalized text NOT NULL,
        visibility text NOT NULL DEFAULT 'PRIVATE' CHECK (visibility IN ('PRIVATE', 'SHARED')),
        status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUPERSEDED', 'DELETED')),
        confidence real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        mention_count integer NOT NULL DEFAULT 1 CHECK (mention_count >= 1),
        source_conversation_id uuid REFERENCES conversations(id) ON DELETE SET NULL,
        source_range_start integer,
        source_range_end integer,
        source_message_ids uuid[] NOT NULL DEFAULT '{}',
        valid_from timestamptz NOT NULL DEFAULT now(),
        valid_to timestamptz,
        -- No foreign key: the delete trigger below clears it and reactivates the older fact.
        superseded_by uuid,
        deleted_at timestamptz,
        deleted_by uuid REFERENCES users(id) ON DELETE SET NULL,
        search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT facts_superseded_has_end CHECK (status <> 'SUPERSEDED' OR valid_to IS NOT NULL),
        CONSTRAINT facts_source_range_check CHECK (source_range_end >= source_range_start)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX facts_active_normalized_unique ON facts (legacy_id, author_id, normalized) WHERE status = 'ACTIVE'`,
    );
    await q.query(
      `CREATE INDEX facts_author_idx ON facts (legacy_id, author_id, status, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX facts_shared_idx ON facts (legacy_id, status, created_at DESC, id DESC) WHERE visibility = 'SHARED'`,
    );
    await q.query(
      `CREATE INDEX facts_superseded_by_idx ON facts (superseded_by) WHERE superseded_by IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX facts_source_conversation_idx ON facts (source_conversation_id) WHERE source_conversation_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX facts_search_tsv_idx ON facts USING gin (search_tsv)`);
    await q.query(`CREATE INDEX facts_content_trgm_idx ON facts USING gin (content gin_trgm_ops)`);
    await q.query(
      `CREATE TRIGGER facts_forget_vectors AFTER DELETE ON facts
         FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('fact')`,
    );
    // AFTER, not BEFORE: a BEFORE trigger changing rows the same cascade deletes is an error.
    await q.query(`
      CREATE FUNCTION facts_release_superseded() RETURNS trigger LANGUAGE plpgsql AS $$
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
      `CREATE TRIGGER facts_release_superseded AFTER DELETE ON facts
         FOR EACH ROW EXECUTE FUNCTION facts_release_superseded()`,
    );

    await q.query(`
      CREATE TABLE fact_sources (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        fact_id uuid NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('CONVERSATION', 'MANUAL')),
        conversation_id uuid REFERENCES conversations(id) ON DELETE CASCADE,
        chunk_id uuid REFERENCES conversation_chunks(id) ON DELETE CASCADE,
        range_start integer,
        range_end integer,
        message_ids uuid[] NOT NULL DEFAULT '{}',
        added_by uuid REFERENCES users(id) ON DELETE SET NULL,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT fact_sources_origin_check
          CHECK ((kind = 'CONVERSATION') = (conversation_id IS NOT NULL AND chunk_id IS NOT NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX fact_sources_chunk_unique ON fact_sources (fact_id, chunk_id) WHERE chunk_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX fact_sources_fact_idx ON fact_sources (fact_id, created_at)`);
    await q.query(
      `CREATE INDEX fact_sources_conversation_idx ON fact_sources (conversation_id) WHERE conversation_id IS NOT NULL`,
    );
    await q.query(`
      CREATE FUNCTION fact_sources_forget() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE remaining integer;
      BEGIN
        SELECT count(*) INTO remaining FROM fact_sources WHERE fact_id = OLD.fact_id;
        IF remaining = 0 THEN
          DELETE FROM facts WHERE id = OLD.fact_id;
        ELSE
          -- Its first source is now the earliest mention left.
          UPDATE facts f
             SET mention_count = remaining, source_conversation_id = s.conversation_id,
                 source_range_start = s.range_start, source_range_end = s.range_end,
                 source_message_ids = s.message_ids, updated_at = now()
            FROM (SELECT conversation_id, range_start, range_end, message_ids
                    FROM fact_sources WHERE fact_id = OLD.fact_id
                   ORDER BY occurred_at, created_at, id LIMIT 1) s
           WHERE f.id = OLD.fact_id;
        END IF;
        RETURN OLD;
      END $$`);
    await q.query(
      `CREATE TRIGGER fact_sources_forget AFTER DELETE ON fact_sources
         FOR EACH ROW EXECUTE FUNCTION fact_sources_forget()`,
    );

    await q.query(`
      CREATE TABLE fact_history (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        fact_id uuid NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
        action text NOT NULL CHECK (action IN ('CREATED', 'MENTIONED', 'UPDATED',
          'VISIBILITY_CHANGED', 'DELETED', 'RESTORED', 'SUPERSEDED')),
        actor_id uuid REFERENCES users(id) ON DELETE SET NULL,
        content text NOT NULL,
        category text NOT NULL,
        visibility text NOT NULL,
        status text NOT NULL,
        mention_count integer NOT NULL,
        related_fact_id uuid REFERENCES facts(id) ON DELETE SET NULL,
        conversation_id uuid REFERENCES conversations(id) ON DELETE SET NULL,
        detail text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX fact_history_fact_idx ON fact_history (fact_id, created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM embeddings WHERE kind = 'fact'`);
    await q.query(`DROP TABLE fact_history`);
    await q.query(`DROP TABLE fact_sources`);
    await q.query(`DROP FUNCTION fact_sources_forget`);
    await q.query(`DROP TABLE facts`);
    await q.query(`DROP FUNCTION facts_release_superseded`);
  }
}
