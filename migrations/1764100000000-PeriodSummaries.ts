import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Weekly, monthly and yearly summaries per member and legacy, the scheduler's position per
 * member, and the progress of backfills.
 */
export class PeriodSummaries1764100000000 implements MigrationInterface {
  name = 'PeriodSummaries1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE period_summaries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        period text NOT NULL CHECK (period IN ('WEEK', 'MONTH', 'YEAR')),
        period_start date NOT NULL,
        period_end date NOT NULL,
        time_zone text NOT NULL,
        -- The instants the local dates began and ended in time_zone: what time questions match.
        starts_at timestamptz NOT NULL,
        ends_at timestamptz NOT NULL,
        summary text NOT NULL,
        emotional_tone text,
        key_themes text[] NOT NULL DEFAULT '{}',
        recurring_patterns text[] NOT NULL DEFAULT '{}',
        people text[] NOT NULL DEFAULT '{}',
        places text[] NOT NULL DEFAULT '{}',
        conversation_count integer NOT NULL DEFAULT 0,
        turn_count integer NOT NULL DEFAULT 0,
        source_chunk_ids uuid[] NOT NULL DEFAULT '{}',
        source_period_ids uuid[] NOT NULL DEFAULT '{}',
        conversation_ids uuid[] NOT NULL DEFAULT '{}',
        source_fingerprint text NOT NULL DEFAULT '',
        aggregated boolean NOT NULL DEFAULT false,
        model text NOT NULL DEFAULT '',
        prompt_version text,
        stale boolean NOT NULL DEFAULT false,
        -- Deleted by the member: the content is gone, the row only says "do not rebuild".
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        CONSTRAINT period_summaries_unique UNIQUE (user_id, legacy_id, period, period_start)
      )`);
    // What a period reads: a member's turns in a legacy by time.
    await q.query(
      `CREATE INDEX messages_member_time_idx ON messages (user_id, legacy_id, occurred_at)`,
    );
    // ... and their conversation summaries.
    await q.query(
      `CREATE INDEX conversation_chunks_member_time_idx
         ON conversation_chunks (user_id, legacy_id, last_occurred_at)`,
    );
    await q.query(
      `CREATE INDEX period_summaries_time_idx ON period_summaries (user_id, legacy_id, starts_at, ends_at)`,
    );
    await q.query(
      `CREATE INDEX period_summaries_conversations_idx ON period_summaries USING gin (conversation_ids)`,
    );
    await q.query(
      `CREATE TRIGGER period_summaries_forget_embeddings AFTER DELETE ON period_summaries
         FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('period')`,
    );
    await q.query(`
      CREATE TABLE period_summary_cursors (
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        period text NOT NULL CHECK (period IN ('WEEK', 'MONTH', 'YEAR')),
        -- The first period the scheduler has not enqueued yet.
        next_start date NOT NULL,
        PRIMARY KEY (user_id, legacy_id, period)
      )`);
    await q.query(`
      CREATE TABLE period_summary_backfills (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        from_day date NOT NULL,
        to_day date NOT NULL,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
      )`);
    await q.query(`
      CREATE TABLE period_summary_backfill_items (
        backfill_id uuid NOT NULL REFERENCES period_summary_backfills(id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        legacy_id uuid NOT NULL,
        period text NOT NULL,
        period_start date NOT NULL,
        state text NOT NULL DEFAULT 'PENDING'
          CHECK (state IN ('PENDING', 'STORED', 'EMPTY', 'SKIPPED')),
        PRIMARY KEY (backfill_id, period, period_start)
      )`);
    await q.query(
      `CREATE INDEX period_summary_backfill_items_key_idx
         ON period_summary_backfill_items (user_id, legacy_id, period, period_start) WHERE state = 'PENDING'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE period_summary_backfill_items`);
    await q.query(`DROP TABLE period_summary_backfills`);
    await q.query(`DROP TABLE period_summary_cursors`);
    await q.query(`DROP TABLE period_summaries`);
    await q.query(`DROP INDEX conversation_chunks_member_time_idx`);
    await q.query(`DROP INDEX messages_member_time_idx`);
    await q.query(`DELETE FROM embeddings WHERE kind = 'period'`);
  }
}
