import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signing out revokes the session's token: its SHA-256 is kept until the token would have
 * expired, where every instance reads it (tokens themselves are never stored).
 */
export class RevokedTokens1764102600000 implements MigrationInterface {
  name = 'RevokedTokens1764102600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE revoked_tokens (
        token_hash text PRIMARY KEY,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX revoked_tokens_expires_idx ON revoked_tokens (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE revoked_tokens`);
  }
}
