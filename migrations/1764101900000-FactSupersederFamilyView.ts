import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A fact superseded by a newer one shows the family that supersession only while they can see
 * the newer fact (fact-visibility.ts). When the newer fact is shared, taken back, deleted or
 * restored, the older one changes for them: its last change as they see it moves as well, so a
 * client that keeps facts by their `updatedAt` reads it again. Its author's view is unchanged.
 */
export class FactSupersederFamilyView1764101900000 implements MigrationInterface {
  name = 'FactSupersederFamilyView1764101900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION facts_superseder_seen() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (NEW.visibility = 'SHARED' AND NEW.status <> 'DELETED')
           IS DISTINCT FROM (OLD.visibility = 'SHARED' AND OLD.status <> 'DELETED') THEN
          UPDATE facts SET shared_updated_at = NEW.updated_at
           WHERE superseded_by = NEW.id AND shared_updated_at < NEW.updated_at;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER facts_superseder_seen AFTER UPDATE OF visibility, status ON facts
                     FOR EACH ROW EXECUTE FUNCTION facts_superseder_seen()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER facts_superseder_seen ON facts`);
    await q.query(`DROP FUNCTION facts_superseder_seen()`);
  }
}
