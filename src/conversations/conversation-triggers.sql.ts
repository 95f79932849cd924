import type { SqlDefinitions } from '../database/sql-definitions.js';

/**
 * The conversation log's guard (what was said, by whom, where and for whom is never rewritten)
 * and a participant's leaving every together conversation of a legacy they leave.
 */
export const CONVERSATION_SQL: SqlDefinitions = {
  functions: {
    messages_forbid_rewrite: `CREATE OR REPLACE FUNCTION messages_forbid_rewrite()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.content IS DISTINCT FROM OLD.content
          OR NEW.role IS DISTINCT FROM OLD.role
          OR NEW.turn_index IS DISTINCT FROM OLD.turn_index
          OR NEW.conversation_id IS DISTINCT FROM OLD.conversation_id
          OR NEW.created_at IS DISTINCT FROM OLD.created_at
          OR NEW.occurred_at IS DISTINCT FROM OLD.occurred_at
          OR NEW.placeholder IS DISTINCT FROM OLD.placeholder
          OR NEW.user_id IS DISTINCT FROM OLD.user_id
          OR NEW.legacy_id IS DISTINCT FROM OLD.legacy_id
          OR NEW.answered_alone IS DISTINCT FROM OLD.answered_alone THEN
          RAISE EXCEPTION 'messages are immutable';
        END IF;
        RETURN NEW;
      END $$`,
    conversation_participants_left_legacy: `CREATE OR REPLACE FUNCTION conversation_participants_left_legacy()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE conversation_participants p
           SET left_at = now(), left_at_turn = c.next_turn_index
          FROM conversations c
         WHERE c.id = p.conversation_id AND c.legacy_id = OLD.legacy_id
           AND p.user_id = OLD.user_id AND p.left_at IS NULL
           AND EXISTS (SELECT 1 FROM conversation_participants o
                        WHERE o.conversation_id = p.conversation_id AND o.user_id <> p.user_id);
        RETURN OLD;
      END $$`,
  },
  triggers: {
    messages_immutable: `CREATE TRIGGER messages_immutable BEFORE UPDATE ON messages
      FOR EACH ROW EXECUTE FUNCTION messages_forbid_rewrite()`,
    conversation_participants_left_legacy: `CREATE TRIGGER conversation_participants_left_legacy
      AFTER DELETE ON legacy_members
      FOR EACH ROW EXECUTE FUNCTION conversation_participants_left_legacy()`,
  },
};
