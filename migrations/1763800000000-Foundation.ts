import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763800000000 implements MigrationInterface {
  name = 'Foundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS vector`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);

    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subject text NOT NULL UNIQUE,
        email text,
        display_name text,
        timezone text NOT NULL DEFAULT 'UTC',
        remember_by_default boolean NOT NULL DEFAULT true,
        is_platform_admin boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX users_email_idx ON users (lower(email))`);

    await q.query(`
      CREATE TABLE legacies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        description text,
        born_on date,
        died_on date,
        persona text,
        created_by uuid NOT NULL REFERENCES users(id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE legacy_members (
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
        joined_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (legacy_id, user_id)
      )`);
    await q.query(
      `CREATE INDEX legacy_members_user_idx ON legacy_members (user_id, joined_at, legacy_id)`,
    );

    await q.query(`
      CREATE TABLE legacy_invitations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
        invited_by uuid NOT NULL REFERENCES users(id),
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (legacy_id, email)
      )`);
    await q.query(`CREATE INDEX legacy_invitations_email_idx ON legacy_invitations (email)`);

    await q.query(`
      CREATE TABLE conversations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title text,
        remember boolean NOT NULL,
        next_turn_index integer NOT NULL DEFAULT 0,
        last_activity_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX conversations_owner_activity_idx ON conversations (legacy_id, user_id, last_activity_at DESC, id DESC)`,
    );

    await q.query(`
      CREATE TABLE messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        legacy_id uuid NOT NULL REFERENCES legacies(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        turn_index integer NOT NULL CHECK (turn_index >= 0),
        role text NOT NULL CHECK (role IN ('USER', 'ASSISTANT')),
        content text NOT NULL CHECK (length(btrim(content)) > 0),
        token_count integer NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        client_message_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        occurred_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT messages_turn_unique UNIQUE (conversation_id, turn_index)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX messages_client_id_unique ON messages (conversation_id, client_message_id) WHERE client_message_id IS NOT NULL`,
    );

    // The log is immutable: what was said, by whom and when can never be rewritten.
    await q.query(`
      CREATE FUNCTION messages_forbid_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
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
    await q.query(
      `CREATE TRIGGER messages_immutable BEFORE UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION messages_forbid_rewrite()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE messages`);
    await q.query(`DROP FUNCTION messages_forbid_rewrite`);
    await q.query(`DROP TABLE conversations`);
    await q.query(`DROP TABLE legacy_invitations`);
    await q.query(`DROP TABLE legacy_members`);
    await q.query(`DROP TABLE legacies`);
    await q.query(`DROP TABLE users`);
  }
}
