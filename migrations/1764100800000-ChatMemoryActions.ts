import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Memory by chat: what a reply did to the user's memories (saved, forgotten, looked up, refused
 * for consent) is kept with the reply, so a client can offer "Undo"; and a user turn that was a
 * memory command is marked in the extraction ledger, so extraction never re-saves what the
 * user just asked to forget (or saves a command a second time).
 */
export class ChatMemoryActions1764100800000 implements MigrationInterface {
  name = 'ChatMemoryActions1764100800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE assistant_replies ADD COLUMN memory_actions jsonb NOT NULL DEFAULT '[]'::jsonb`,
    );
    await q.query(
      `ALTER TABLE memory_extractions DROP CONSTRAINT IF EXISTS memory_extractions_outcome_check`,
    );
    await q.query(`
      ALTER TABLE memory_extractions ADD CONSTRAINT memory_extractions_outcome_check
        CHECK (outcome IN ('EXTRACTED', 'NO_CONSENT', 'COMMAND'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM memory_extractions WHERE outcome = 'COMMAND'`);
    await q.query(
      `ALTER TABLE memory_extractions DROP CONSTRAINT IF EXISTS memory_extractions_outcome_check`,
    );
    await q.query(`
      ALTER TABLE memory_extractions ADD CONSTRAINT memory_extractions_outcome_check
        CHECK (outcome IN ('EXTRACTED', 'NO_CONSENT'))`);
    await q.query(`ALTER TABLE assistant_replies DROP COLUMN memory_actions`);
  }
}
