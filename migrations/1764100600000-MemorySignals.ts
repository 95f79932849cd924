import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What explains the upgrade triggers and feeds the memory A/B comparison. Each retrieval metrics
 * row gains its per-path times (dense, full text, trigram fallback, fusion), the best dense
 * similarities found, the A/B arm and whether the user's turn was a "you forgot" complaint.
 * Each agent reply gains its arm, how many memories were (or, held out, would have been) in
 * its memory block, whether it referenced one, and whether the turn it answers was a complaint.
 * Existing rows read as the memory arm with no complaint, which is what they were.
 */
export class MemorySignals1764100600000 implements MigrationInterface {
  name = 'MemorySignals1764100600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE retrieval_metrics
        ADD COLUMN dense_ms real NOT NULL DEFAULT 0,
        ADD COLUMN lexical_ms real NOT NULL DEFAULT 0,
        ADD COLUMN trigram_ms real NOT NULL DEFAULT 0,
        ADD COLUMN fusion_ms real NOT NULL DEFAULT 0,
        ADD COLUMN top_similarities real[] NOT NULL DEFAULT '{}',
        ADD COLUMN memory_holdout boolean NOT NULL DEFAULT false,
        ADD COLUMN forgot_complaint boolean NOT NULL DEFAULT false`);
    await q.query(`
      ALTER TABLE assistant_replies
        ADD COLUMN memory_holdout boolean NOT NULL DEFAULT false,
        ADD COLUMN memories_offered integer NOT NULL DEFAULT 0 CHECK (memories_offered >= 0),
        ADD COLUMN memory_referenced boolean NOT NULL DEFAULT false,
        ADD COLUMN forgot_complaint boolean NOT NULL DEFAULT false`);
    // memoryUplift reads a period of replies.
    await q.query(`CREATE INDEX assistant_replies_created_idx ON assistant_replies (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS assistant_replies_created_idx`);
    await q.query(`
      ALTER TABLE assistant_replies
        DROP COLUMN forgot_complaint,
        DROP COLUMN memory_referenced,
        DROP COLUMN memories_offered,
        DROP COLUMN memory_holdout`);
    await q.query(`
      ALTER TABLE retrieval_metrics
        DROP COLUMN forgot_complaint,
        DROP COLUMN memory_holdout,
        DROP COLUMN top_similarities,
        DROP COLUMN fusion_ms,
        DROP COLUMN trigram_ms,
        DROP COLUMN lexical_ms,
        DROP COLUMN dense_ms`);
  }
}
