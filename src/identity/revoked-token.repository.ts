import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { affected, run, sql } from '../database/sql.js';

/** `revoked_tokens`: the SHA-256 of each signed-out token, until the token would have expired. */
@Injectable()
export class RevokedTokenRepository {
  constructor(private readonly dataSource: DataSource) {}

  async add(manager: EntityManager, tokenHash: string, expiresAt: Date): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO revoked_tokens (token_hash, expires_at) VALUES (${tokenHash}, ${expiresAt})
       ON CONFLICT (token_hash) DO NOTHING`,
    );
  }

  async isRevoked(tokenHash: string): Promise<boolean> {
    const rows = await run(
      this.dataSource.manager,
      sql`SELECT 1 FROM revoked_tokens WHERE token_hash = ${tokenHash}`,
    );
    return rows.length > 0;
  }

  /** Entries of tokens that have expired anyway (refused as expired): answers how many. */
  pruneExpired(): Promise<number> {
    return affected(
      this.dataSource.manager,
      sql`DELETE FROM revoked_tokens WHERE expires_at < now()`,
    );
  }
}
