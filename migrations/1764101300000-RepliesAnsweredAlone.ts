import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An agent's turn written while its conversation had one participant was made with what only
 * that participant may see (their memories, profile, private facts; the offline notice lists
 * them word for word). Once others are brought in, those turns are theirs alone to read.
 * Replies written before this are marked when no other current participant had joined by
 * then (a member who left and came back counts from their return: marked, not exposed).
 */
export class RepliesAnsweredAlone1764101300000 implements MigrationInterface {
  name = 'RepliesAnsweredAlone1764101300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN answered_alone boolean NOT NULL DEFAULT false`);
    await q.query(`
      UPDATE messages m SET answered_alone = true
       WHERE m.role = 'ASSISTANT'
         AND EXISTS (SELECT 1 FROM assistant_replies r WHERE r.message_id = m.id)
         AND NOT EXISTS (SELECT 1 FROM conversation_participants p
                          WHERE p.conversation_id = m.conversation_id AND p.user_id <> m.user_id
                            AND p.joined_at <= m.created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN answered_alone`);
  }
}
