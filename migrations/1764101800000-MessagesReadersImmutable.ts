import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who said a turn (or whom a reply answered), in which legacy, and whether a reply was made for
 * its participant alone decide who reads it: part of the immutable log, like its content. A
 * reply unmarked as answered alone would show another participant what only one may see.
 */
export class MessagesReadersImmutable1764101800000 implements MigrationInterface {
  name = 'MessagesReadersImmutable1764101800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION messages_forbid_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
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
          OR NEW.occurred_at IS DISTINCT FROM OLD.occurred_at
          OR NEW.placeholder IS DISTINCT FROM OLD.placeholder THEN
          RAISE EXCEPTION 'messages are immutable';
        END IF;
        RETURN NEW;
      END $$`);
  }
}
