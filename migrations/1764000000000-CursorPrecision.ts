import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keyset cursors carry these sort keys as JavaScript dates, which hold milliseconds; PostgreSQL
 * keeps microseconds, so a page's last row compared greater than its own cursor and came back
 * on the next page. Stored at millisecond precision, a key round-trips through a cursor exactly.
 */
const CURSOR_KEYS: [table: string, column: string][] = [
  ['legacy_members', 'joined_at'],
  ['conversations', 'last_activity_at'],
  ['jobs', 'updated_at'],
  ['memories', 'created_at'],
];

export class CursorPrecision1764000000000 implements MigrationInterface {
  name = 'CursorPrecision1764000000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, column] of CURSOR_KEYS) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE timestamptz(3)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, column] of CURSOR_KEYS) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE timestamptz`);
    }
  }
}
