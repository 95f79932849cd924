import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Legacy archives: an export of what one member may see of a legacy, or an uploaded archive
 * imported as a new legacy. The ZIP itself lives in a directory, or here in chunks
 * (legacy_archive_chunks) where several instances serve downloads. An import records the ids
 * it gave each item of the archive (legacy_archive_items) in the transaction that writes the
 * item, with its cursor, so that an import cut short goes on where it stopped.
 */
export class LegacyArchives1764102100000 implements MigrationInterface {
  name = 'LegacyArchives1764102100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE legacy_archives (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        kind text NOT NULL CHECK (kind IN ('EXPORT', 'IMPORT')),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        -- EXPORT: the legacy exported. IMPORT: the legacy made, once the import began. A legacy
        -- deleted leaves its exports unreadable (and an import that failed, its record).
        legacy_id uuid REFERENCES legacies(id) ON DELETE SET NULL,
        status text NOT NULL
          CHECK (status IN ('UPLOADED', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'EXPIRED')),
        stage text,
        done integer NOT NULL DEFAULT 0,
        total integer NOT NULL DEFAULT 0,
        counts jsonb NOT NULL DEFAULT '{}',
        -- IMPORT: where the import has got to (part and line), written with what it imported.
        cursor jsonb,
        manifest jsonb,
        file_name text,
        size_bytes bigint,
        -- Where the bytes are: 'directory' or 'database'.
        stored_in text CHECK (stored_in IN ('directory', 'database')),
        failure_reason text,
        failure_code text,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        finished_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX legacy_archives_user_idx ON legacy_archives (user_id, created_at DESC)`,
    );
    await q.query(
      `CREATE INDEX legacy_archives_expiry_idx ON legacy_archives (expires_at)
         WHERE status IN ('UPLOADED', 'COMPLETED', 'FAILED')`,
    );
    await q.query(`
      CREATE TABLE legacy_archive_chunks (
        archive_id uuid NOT NULL REFERENCES legacy_archives(id) ON DELETE CASCADE,
        seq integer NOT NULL,
        content bytea NOT NULL,
        PRIMARY KEY (archive_id, seq)
      )`);
    await q.query(`
      CREATE TABLE legacy_archive_items (
        archive_id uuid NOT NULL REFERENCES legacy_archives(id) ON DELETE CASCADE,
        kind text NOT NULL,
        original_id text NOT NULL,
        new_id uuid NOT NULL,
        PRIMARY KEY (archive_id, kind, original_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE legacy_archive_items`);
    await q.query(`DROP TABLE legacy_archive_chunks`);
    await q.query(`DROP TABLE legacy_archives`);
  }
}
