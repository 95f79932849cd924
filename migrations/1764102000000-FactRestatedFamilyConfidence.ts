import { MigrationInterface, QueryRunner } from 'typeorm';
import { familyView } from './1764101200000-FactFamilyView.js';

/**
 * A shared fact that restates others took on their confidence as its author knows it (raised by
 * private restatements, or a private fact's own), and the trigger showed it to the family with
 * the recount. The recount now sets the family's confidence itself, from what they saw.
 */
export class FactRestatedFamilyConfidence1764102000000 implements MigrationInterface {
  name = 'FactRestatedFamilyConfidence1764102000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(familyView(false));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(familyView(true));
  }
}
