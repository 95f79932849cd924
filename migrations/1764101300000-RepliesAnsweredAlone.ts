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
    // The agent's replies, and turns a client's own model recorded (any assistant turn but
    // those an import brought, which were stored with their conversation).
    await q.query(`
      UPDATE messages m SET answered_alone = true
        FROM conversations c
       WHERE c.id = m.conversation_id AND m.role = 'ASSISTANT'
         AND (EXISTS (SELECT 1 FROM assistant_replies r WHERE r.message_id = m.id)
              OR NOT c.imported OR m.created_at > c.created_at)
         AND NOT EXISTS (SELECT 1 FROM conversation_participants p
                          WHERE p.conversation_id = m.conversation_id AND p.user_id <> m.user_id
                            AND p.joined_at <= m.created_at)`);
    // The turn after such a reply was indexed with it as its context (its words and its
    // vector): indexed again without it, its vector made again by the embedding sweep.
    const after = `SELECT s.id FROM message_segments s
        JOIN messages prev ON prev.conversation_id = s.conversation_id
                          AND prev.turn_index = s.turn_index - 1 AND prev.answered_alone
       WHERE s.context IS NOT NULL`;
    await q.query(`DELETE FROM embeddings WHERE kind = 'segment' AND item_id IN (${after})`);
    await q.query(
      `UPDATE message_segments SET context = NULL, context_length = 0 WHERE id IN (${after})`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN answered_alone`);
  }
}
