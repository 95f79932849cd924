import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the things a turn names are kinds of ("taekwondo": martial art; "Rome": city), from
 * WordNet, kept with its segments and indexed for full-text search in a vector of their own
 * (`kinds_tsv`, weight 'C', GIN), so that a question asked with the kind finds the turn that
 * names the instance. Apart from `search_tsv`, because BM25 reads a matching turn's words one
 * by one: the kinds are read only for the turns whose kinds match. Segments stored before this
 * are read by a background job (search:word-kinds); `kinds_checked` says which it has done.
 */
export class SegmentKinds1764101500000 implements MigrationInterface {
  name = 'SegmentKinds1764101500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE message_segments
        ADD COLUMN kinds text,
        ADD COLUMN kinds_checked boolean NOT NULL DEFAULT false,
        ADD COLUMN kinds_tsv tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', coalesce(kinds, '')), 'C')
        ) STORED`);
    await q.query(
      `CREATE INDEX message_segments_kinds_tsv_idx ON message_segments USING gin (kinds_tsv)`,
    );
    await q.query(`
      CREATE INDEX message_segments_kinds_pending_idx ON message_segments (id)
        WHERE NOT kinds_checked`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS message_segments_kinds_pending_idx`);
    await q.query(`DROP INDEX IF EXISTS message_segments_kinds_tsv_idx`);
    await q.query(
      `ALTER TABLE message_segments DROP COLUMN kinds_tsv, DROP COLUMN kinds_checked, DROP COLUMN kinds`,
    );
    // The statistics counted the kinds' words: count the segments' words again without them.
    await q.query(`DELETE FROM search_term_stats`);
    await q.query(`
      INSERT INTO search_term_stats (conversation_id, lexeme, df)
      SELECT s.conversation_id, u.lexeme, count(*)::int
        FROM message_segments s CROSS JOIN LATERAL unnest(s.search_tsv) AS u
       GROUP BY s.conversation_id, u.lexeme`);
  }
}
