import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How each assistant turn the agent wrote came about: the model, its usage, the context items it
 * was given, and whether it is an error turn. Kept beside the immutable log rather than in it,
 * so turns recorded by clients (recordAssistantMessage) have no row here.
 */
export class AgentReplies1763800300000 implements MigrationInterface {
  name = 'AgentReplies1763800300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE assistant_replies (
        message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        reply_to_message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        model text NOT NULL,
        prompt_tokens integer NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
        completion_tokens integer NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
        finish_reason text,
        is_error boolean NOT NULL DEFAULT false,
        error_code text,
        context_items jsonb NOT NULL DEFAULT '[]',
        context_tokens integer NOT NULL DEFAULT 0,
        context_truncated boolean NOT NULL DEFAULT false,
        latency_ms integer,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // One reply per user turn, whatever the retries.
    await q.query(
      `CREATE UNIQUE INDEX assistant_replies_reply_to_key ON assistant_replies (reply_to_message_id)`,
    );
    await q.query(
      `CREATE INDEX assistant_replies_conversation_idx ON assistant_replies (conversation_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE assistant_replies`);
  }
}
