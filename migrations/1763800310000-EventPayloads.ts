import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * NOTIFY payloads are limited to 8000 bytes. Larger subscription events (a long turn) are parked
 * here for a few minutes and the notification carries only their id.
 */
export class EventPayloads1763800310000 implements MigrationInterface {
  name = 'EventPayloads1763800310000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE event_payloads (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX event_payloads_created_idx ON event_payloads (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_payloads`);
  }
}
