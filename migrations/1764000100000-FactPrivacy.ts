import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Other members see a shared fact's mention count as it was when its author shared it: the
 * author's later mentions come from their private conversations. History entries keep that
 * count beside the author's own.
 */
export class FactPrivacy1764000100000 implements MigrationInterface {
  name = 'FactPrivacy1764000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE facts ADD COLUMN shared_mention_count integer NOT NULL DEFAULT 0
         CHECK (shared_mention_count >= 0)`,
    );
    await q.query(
      `UPDATE facts SET shared_mention_count = mention_count WHERE visibility = 'SHARED'`,
    );
    await q.query(
      `ALTER TABLE fact_history ADD COLUMN shared_mention_count integer NOT NULL DEFAULT 0`,
    );
    await q.query(
      `UPDATE fact_history h SET shared_mention_count = f.shared_mention_count
         FROM facts f WHERE f.id = h.fact_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE fact_history DROP COLUMN shared_mention_count`);
    await q.query(`ALTER TABLE facts DROP COLUMN shared_mention_count`);
  }
}
