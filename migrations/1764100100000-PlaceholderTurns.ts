import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Turns with no content of the conversation (the offline notice when no language model is
 * configured, the notice of a failed reply) stay in the log, marked, and out of everything
 * derived from it: their search segments go now; summaries, facts and memories skip them.
 */
export class PlaceholderTurns1764100100000 implements MigrationInterface {
  name = 'PlaceholderTurns1764100100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN placeholder boolean NOT NULL DEFAULT false`);
    await q.query(`
      UPDATE messages m SET placeholder = true
        FROM assistant_replies r
       WHERE r.message_id = m.id AND (r.is_error OR r.model LIKE 'local:%')`);
    await q.query(`
      DELETE FROM message_segments s USING messages m
       WHERE s.message_id = m.id AND m.placeholder`);
    // How a turn was written is part of the immutable log, like its content.
    await q.query(`
      CREATE OR REPLACE FUNCTION messages_forbid_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.content IS DISTINCT FROM OLD.content
          OR NEW.role IS DISTINCT FROM OLD.role
          OR NEW.turn_index IS DISTINCT FROM OLD.turn_index
          OR NEW.conversation_id IS DISTINCT FROM OLD.conversation_id
          OR NEW.created_at IS DISTINCT FROM OLD.created_at
          OR NEW.occurred_at IS DISTINCT FROM OLD.occurred_at
          OR NEW.placeholder IS DISTINCT FROM OLD.placeholder THEN
          RAISE EXCEPTION 'messages are immutable';
        END IF;
        RETURN NEW;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION messages_forbid_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.content IS DISTINCT FROM OLD.content
          OR NEW.role IS DISTINCT FROM OLD.role
          OR NEW.turn_index IS DISTINCT FROM OLD.turn_index
          OR NEW.conversation_id IS DISTINCT FROM OLD.conversation_id
          OR NEW.created_at IS DISTINCT FROM OLD.created_at
          OR NEW.occurred_at IS DISTINCT FROM OLD.occurred_at THEN
          RAISE EXCEPTION 'messages are immutable';
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`ALTER TABLE messages DROP COLUMN placeholder`);
  }
}
