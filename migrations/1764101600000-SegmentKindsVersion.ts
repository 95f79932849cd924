import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which version of the kinds' rules read each segment (`kinds_version`, null: never read), in
 * place of a flag that only said whether they were read: when the rules change (word-kinds.ts's
 * KINDS_VERSION), the search:word-kinds job reads the segments of older versions again and
 * nets the full-text statistics, instead of leaving every earlier turn with the old kinds.
 */
export class SegmentKindsVersion1764101600000 implements MigrationInterface {
  name = 'SegmentKindsVersion1764101600000';

  async up(q: QueryRunner): Promise<void> {
    // Everything read so far was read by the first version of the rules. A constant default
    // is stored once in the catalogue, not written into every row: rewriting every segment
    // tripled the table and its indexes (no vacuum in the embedded database) and slowed recall.
    await q.query(`ALTER TABLE message_segments ADD COLUMN kinds_version smallint DEFAULT 1`);
    await q.query(`ALTER TABLE message_segments ALTER COLUMN kinds_version DROP DEFAULT`);
    await q.query(`UPDATE message_segments SET kinds_version = NULL WHERE NOT kinds_checked`);
    await q.query(`DROP INDEX IF EXISTS message_segments_kinds_pending_idx`);
    await q.query(`ALTER TABLE message_segments DROP COLUMN kinds_checked`);
    await q.query(
      `CREATE INDEX message_segments_kinds_version_idx ON message_segments (kinds_version)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS message_segments_kinds_version_idx`);
    // The same way back: the common value as the stored default, the few others written.
    await q.query(
      `ALTER TABLE message_segments ADD COLUMN kinds_checked boolean NOT NULL DEFAULT true`,
    );
    await q.query(`ALTER TABLE message_segments ALTER COLUMN kinds_checked SET DEFAULT false`);
    await q.query(`UPDATE message_segments SET kinds_checked = false WHERE kinds_version IS NULL`);
    await q.query(`ALTER TABLE message_segments DROP COLUMN kinds_version`);
    await q.query(`
      CREATE INDEX message_segments_kinds_pending_idx ON message_segments (id)
        WHERE NOT kinds_checked`);
  }
}
