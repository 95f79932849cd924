import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Together conversations: several members of the legacy take part in one conversation. Each
 * participant has their own remember switch; one who leaves keeps read access to the turns said
 * while they were in it (`left_at_turn`: turns below it), nothing after. Every existing
 * conversation gets its starter as its one participant, with the switch it had (the
 * conversation's own switch goes).
 */
export class TogetherConversations1764100900000 implements MigrationInterface {
  name = 'TogetherConversations1764100900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_participants (
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        remember boolean NOT NULL,
        added_by uuid REFERENCES users(id) ON DELETE SET NULL,
        joined_at timestamptz NOT NULL DEFAULT now(),
        left_at timestamptz,
        left_at_turn integer,
        PRIMARY KEY (conversation_id, user_id),
        CONSTRAINT conversation_participants_left_check
          CHECK ((left_at IS NULL) = (left_at_turn IS NULL))
      )`);
    await q.query(
      `CREATE INDEX conversation_participants_user_idx
         ON conversation_participants (user_id, conversation_id)`,
    );
    await q.query(
      `INSERT INTO conversation_participants (conversation_id, user_id, remember, joined_at)
       SELECT id, user_id, remember, created_at FROM conversations`,
    );
    // Leaving the legacy (or being removed) ends one's part in its together conversations, at
    // the turn reached then: coming back later does not show what was said meanwhile. A
    // conversation of one's own has no one else to go on in it, and stays as it was.
    await q.query(`
      CREATE FUNCTION conversation_participants_left_legacy() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE conversation_participants p
           SET left_at = now(), left_at_turn = c.next_turn_index
          FROM conversations c
         WHERE c.id = p.conversation_id AND c.legacy_id = OLD.legacy_id
           AND p.user_id = OLD.user_id AND p.left_at IS NULL
           AND EXISTS (SELECT 1 FROM conversation_participants o
                        WHERE o.conversation_id = p.conversation_id AND o.user_id <> p.user_id);
        RETURN OLD;
      END $$`);
    await q.query(
      `CREATE TRIGGER conversation_participants_left_legacy AFTER DELETE ON legacy_members
         FOR EACH ROW EXECUTE FUNCTION conversation_participants_left_legacy()`,
    );
    // One switch per participant, the starter's included: the conversation's own goes.
    await q.query(`ALTER TABLE conversations DROP COLUMN remember`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations ADD COLUMN remember boolean NOT NULL DEFAULT false`);
    await q.query(
      `UPDATE conversations c SET remember = p.remember
         FROM conversation_participants p
        WHERE p.conversation_id = c.id AND p.user_id = c.user_id`,
    );
    await q.query(`DROP TRIGGER conversation_participants_left_legacy ON legacy_members`);
    await q.query(`DROP FUNCTION conversation_participants_left_legacy`);
    await q.query(`DROP TABLE conversation_participants`);
  }
}
