import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conversations brought in with importConversation are marked, so that a memory backfill can
 * leave them out (their turns were never live exchanges with the agent). Earlier imports are
 * recognised by their turns all being stored by one statement, at one instant.
 */
export class ImportedConversations1764100400000 implements MigrationInterface {
  name = 'ImportedConversations1764100400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations ADD COLUMN imported boolean NOT NULL DEFAULT false`);
    await q.query(`
      UPDATE conversations c SET imported = true
        FROM (SELECT conversation_id FROM messages GROUP BY conversation_id
               HAVING count(*) > 1 AND count(DISTINCT created_at) = 1) m
       WHERE m.conversation_id = c.id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations DROP COLUMN imported`);
  }
}
