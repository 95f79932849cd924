import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A range of turns the language model could not summarize, set aside so that the rest of the
 * conversation goes on: summarization continues after it, and a FAILED job of its own lets an
 * operator try it again. Its turns count as unsummarized where summaries are read.
 */
export class SummarySetAsides1764102380000 implements MigrationInterface {
  name = 'SummarySetAsides1764102380000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE summary_set_asides (
        conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        range_start integer NOT NULL CHECK (range_start >= 0),
        range_end integer NOT NULL,
        error text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (conversation_id, range_start),
        CONSTRAINT summary_set_asides_range_check CHECK (range_end >= range_start)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE summary_set_asides`);
  }
}
