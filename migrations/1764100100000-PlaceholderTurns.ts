import { MigrationInterface, QueryRunner } from 'typeorm';

/** The columns the log's guard has kept since Foundation: what was said, where and when. */
export const FOUNDATION_COLUMNS = [
  'content',
  'role',
  'turn_index',
  'conversation_id',
  'created_at',
  'occurred_at',
];

/** The log's guard: an UPDATE that changes any of `columns` is refused. */
export function messagesGuard(columns: string[]): string {
  const changed = columns.map((c) => `NEW.${c} IS DISTINCT FROM OLD.${c}`).join('\n          OR ');
  return `
      CREATE OR REPLACE FUNCTION messages_forbid_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${changed} THEN
          RAISE EXCEPTION 'messages are immutable';
        END IF;
        RETURN NEW;
      END $$`;
}

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
    await q.query(messagesGuard([...FOUNDATION_COLUMNS, 'placeholder']));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(messagesGuard(FOUNDATION_COLUMNS));
    await q.query(`ALTER TABLE messages DROP COLUMN placeholder`);
  }
}
