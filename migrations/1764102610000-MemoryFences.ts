import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a member cleared or forgot stays gone from extraction in flight: a fence per user
 * (clearAllMemories: nothing from a turn said before it is stored) and one per forgotten memory
 * (nothing restating it from a turn said before it). `fenced_at` is the database's clock, as is
 * a turn's `created_at`, so the two compare on one clock. A turn's extraction stopped by a clear
 * is recorded as CLEARED.
 */
export class MemoryFences1764102610000 implements MigrationInterface {
  name = 'MemoryFences1764102610000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE memory_fences (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        memory_id uuid REFERENCES memories(id) ON DELETE CASCADE,
        fenced_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX memory_fences_clear_idx ON memory_fences (user_id) WHERE memory_id IS NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX memory_fences_memory_idx ON memory_fences (memory_id) WHERE memory_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX memory_fences_user_idx ON memory_fences (user_id, fenced_at)`);
    await q.query(
      `ALTER TABLE memory_extractions DROP CONSTRAINT IF EXISTS memory_extractions_outcome_check`,
    );
    await q.query(`
      ALTER TABLE memory_extractions ADD CONSTRAINT memory_extractions_outcome_check
        CHECK (outcome IN ('EXTRACTED', 'NO_CONSENT', 'COMMAND', 'CLEARED'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM memory_extractions WHERE outcome = 'CLEARED'`);
    await q.query(
      `ALTER TABLE memory_extractions DROP CONSTRAINT IF EXISTS memory_extractions_outcome_check`,
    );
    await q.query(`
      ALTER TABLE memory_extractions ADD CONSTRAINT memory_extractions_outcome_check
        CHECK (outcome IN ('EXTRACTED', 'NO_CONSENT', 'COMMAND'))`);
    await q.query(`DROP TABLE memory_fences`);
  }
}
