import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The partial index behind search's standing path (src/search/standing.ts): the members' turns
 * that state a standing instruction or preference, few among all turns, found without reading
 * every turn of the scope. Its predicate is the path's condition, written out as it stood when
 * this migration was written: the planner uses the index only while the two are the same
 * (a test compares them), so a change to the pattern comes with a migration of its own.
 */
const PATTERN =
  "(^|[.!?][[:space:]]+)(please[[:space:]]+)?(always|never)[[:space:]]|\\mfrom now on\\M|\\mwhen(ever)? i ask\\M|\\mi('d| would)?( really)? prefer\\M";

export class StandingInstructions1764101700000 implements MigrationInterface {
  name = 'StandingInstructions1764101700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX message_segments_standing_idx
          ON message_segments (user_id, legacy_id, occurred_at DESC)
       WHERE role = 'USER' AND content ~* '${PATTERN.replace(/'/g, "''")}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS message_segments_standing_idx`);
  }
}
