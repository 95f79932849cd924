import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A superseded fact its author says again comes back into effect; its history entry said so
 * ("Said again …"), which told the family of a mention they may not see, and was shown to them
 * even when what superseded it was private (so for them it had never stopped). The entries
 * written so far take the new wording and are kept for the author: which of them the family
 * could have seen can no longer be told.
 */
export class FactRevivedDetail1764101400000 implements MigrationInterface {
  name = 'FactRevivedDetail1764101400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE fact_history SET detail = 'In effect again after a newer fact had superseded it.',
              visibility = 'PRIVATE'
        WHERE action = 'RESTORED' AND detail = 'Said again after a newer fact had superseded it.'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE fact_history SET detail = 'Said again after a newer fact had superseded it.'
        WHERE action = 'RESTORED' AND detail = 'In effect again after a newer fact had superseded it.'`,
    );
  }
}
