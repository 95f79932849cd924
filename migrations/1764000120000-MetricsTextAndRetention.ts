import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The query text of a metrics row (SEARCH_METRICS_TEXT) lives beside it and goes with its
 * conversation, by foreign key: the row's counts and timings stay for the report. Texts whose
 * conversation is already gone cannot be told apart any more and are dropped.
 */
export class MetricsTextAndRetention1764000120000 implements MigrationInterface {
  name = 'MetricsTextAndRetention1764000120000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE retrieval_metric_texts (
        metric_id uuid PRIMARY KEY REFERENCES retrieval_metrics(id) ON DELETE CASCADE,
        conversation_id uuid REFERENCES conversations(id) ON DELETE CASCADE,
        query_text text NOT NULL
      )`);
    await q.query(
      `CREATE INDEX retrieval_metric_texts_conversation_idx ON retrieval_metric_texts (conversation_id)`,
    );
    await q.query(
      `INSERT INTO retrieval_metric_texts (metric_id, conversation_id, query_text)
       SELECT id, conversation_id, query_text FROM retrieval_metrics
        WHERE query_text IS NOT NULL AND conversation_id IS NOT NULL`,
    );
    await q.query(`ALTER TABLE retrieval_metrics DROP COLUMN query_text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE retrieval_metrics ADD COLUMN query_text text`);
    await q.query(
      `UPDATE retrieval_metrics m SET query_text = t.query_text
         FROM retrieval_metric_texts t WHERE t.metric_id = m.id`,
    );
    await q.query(`DROP TABLE retrieval_metric_texts`);
  }
}
