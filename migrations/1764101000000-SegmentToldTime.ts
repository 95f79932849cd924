import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The period a turn tells of ("last Friday", "two weeks ago", "tomorrow"), read against when it
 * was said, kept with its segments so that a question about that period finds the turn even
 * when it was said days later. Segments stored before this are read by a background job
 * (search:told-times); `told_checked` says which ones it has done.
 */
export class SegmentToldTime1764101000000 implements MigrationInterface {
  name = 'SegmentToldTime1764101000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE message_segments
        ADD COLUMN told_from timestamptz,
        ADD COLUMN told_to timestamptz,
        ADD COLUMN told_checked boolean NOT NULL DEFAULT false`);
    await q.query(`
      CREATE INDEX message_segments_told_idx ON message_segments (legacy_id, user_id, told_from)
        WHERE told_from IS NOT NULL`);
    await q.query(`
      CREATE INDEX message_segments_told_pending_idx ON message_segments (id)
        WHERE NOT told_checked`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS message_segments_told_pending_idx`);
    await q.query(`DROP INDEX IF EXISTS message_segments_told_idx`);
    await q.query(`
      ALTER TABLE message_segments
        DROP COLUMN told_checked, DROP COLUMN told_to, DROP COLUMN told_from`);
  }
}
