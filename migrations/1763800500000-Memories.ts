import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Memories about the user: the record, the extraction ledger (one row per user turn examined,
 * which makes extraction idempotent and rate-limited), and which memories each assistant turn
 * used. Also the user's memory settings. Consent is opt-in: new users start with
 * rememberByDefault off.
 */
export class Memories1763800500000 implements MigrationInterface {
  name = 'Memories1763800500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ALTER COLUMN remember_by_default SET DEFAULT false`);
    await q.query(`ALTER TABLE users ADD COLUMN memory_paused boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE users ADD COLUMN long_term_memory boolean NOT NULL DEFAULT false`);

    await q.query(`
      CREATE TABLE memories (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        legacy_id uuid REFERENCES legacies(id) ON DELETE CASCADE,
        type text NOT NULL
          CHECK (type IN ('FACT', 'EMOTION', 'GOAL', 'PATTERN', 'RELATIONSHIP', 'PREFERENCE')),
        content text NOT NULL CHECK (length(btrim(content)) BETWEEN 1 AND 2000),
        normalized text NOT NULL,
        slot_key text,
        slot_value text,
        confidence real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        source text NOT NULL CHECK (source IN ('CHAT', 'MANUAL', 'IMPORT')),
        conversation_id uuid REFERENCES conversations(id) ON DELETE CASCADE,
        source_message_id uuid REFERENCES messages(id) ON DELETE CASCADE,
        source_turn_index integer,
        conversation_mode text CHECK (conversation_mode IN ('AGENT', 'CLIENT')),
        source_reference text,
        reference_count integer NOT NULL DEFAULT 0 CHECK (reference_count >= 0),
        last_referenced_at timestamptz,
        status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'ARCHIVED', 'DELETED')),
        valid_from timestamptz NOT NULL,
        valid_to timestamptz,
        superseded_by uuid REFERENCES memories(id) ON DELETE SET NULL,
        archived_at timestamptz,
        archive_reason text CHECK (archive_reason IN ('CAP', 'RETENTION', 'SUPERSEDED')),
        deleted_at timestamptz,
        history jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
        CONSTRAINT memories_deleted_at CHECK ((status = 'DELETED') = (deleted_at IS NOT NULL))
      )`);
    await q.query(
      `CREATE INDEX memories_user_created_idx ON memories (user_id, created_at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX memories_user_scope_idx ON memories (user_id, legacy_id, status)`);
    await q.query(
      `CREATE INDEX memories_user_normalized_idx ON memories (user_id, normalized) WHERE status <> 'DELETED'`,
    );
    await q.query(
      `CREATE INDEX memories_user_slot_idx ON memories (user_id, slot_key) WHERE status = 'ACTIVE' AND slot_key IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX memories_user_reference_idx ON memories (user_id, source_reference) WHERE source_reference IS NOT NULL`,
    );
    await q.query(`CREATE INDEX memories_conversation_idx ON memories (conversation_id)`);
    await q.query(`CREATE INDEX memories_source_message_idx ON memories (source_message_id)`);
    await q.query(`CREATE INDEX memories_superseded_by_idx ON memories (superseded_by)`);
    await q.query(
      `CREATE INDEX memories_purge_idx ON memories (deleted_at) WHERE status = 'DELETED'`,
    );
    await q.query(
      `CREATE INDEX memories_retention_idx ON memories (created_at) WHERE status = 'ACTIVE'`,
    );
    await q.query(`CREATE INDEX memories_search_tsv_idx ON memories USING gin (search_tsv)`);
    await q.query(
      `CREATE INDEX memories_content_trgm_idx ON memories USING gin (content gin_trgm_ops)`,
    );
    // Hard deletes (purge, clearAllMemories, a deleted conversation) take the vectors with them.
    await q.query(
      `CREATE TRIGGER memories_forget_embeddings AFTER DELETE ON memories FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('memory')`,
    );

    await q.query(`
      CREATE TABLE memory_extractions (
        source_message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        assistant_message_id uuid REFERENCES messages(id) ON DELETE CASCADE,
        outcome text CHECK (outcome IN ('EXTRACTED', 'NO_CONSENT')),
        attempts integer NOT NULL DEFAULT 0,
        model text,
        proposed_count integer NOT NULL DEFAULT 0,
        below_threshold_count integer NOT NULL DEFAULT 0,
        created_count integer NOT NULL DEFAULT 0,
        merged_count integer NOT NULL DEFAULT 0,
        superseded_count integer NOT NULL DEFAULT 0,
        started_at timestamptz NOT NULL,
        completed_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX memory_extractions_user_started_idx ON memory_extractions (user_id, started_at)`,
    );

    await q.query(`
      CREATE TABLE memory_uses (
        message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        memory_id uuid NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        used_at timestamptz NOT NULL,
        PRIMARY KEY (message_id, memory_id)
      )`);
    await q.query(`CREATE INDEX memory_uses_memory_idx ON memory_uses (memory_id)`);
    await q.query(`CREATE INDEX memory_uses_user_idx ON memory_uses (user_id, message_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE memory_uses`);
    await q.query(`DROP TABLE memory_extractions`);
    await q.query(`DELETE FROM embeddings WHERE kind = 'memory'`);
    await q.query(`DROP TABLE memories`);
    await q.query(`ALTER TABLE users DROP COLUMN long_term_memory`);
    await q.query(`ALTER TABLE users DROP COLUMN memory_paused`);
    await q.query(`ALTER TABLE users ALTER COLUMN remember_by_default SET DEFAULT true`);
  }
}
