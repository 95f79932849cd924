import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createFileOnce } from '../common/files/atomic-file.js';
import { AppConfig } from '../config/app-config.js';

const SECRET_FILE = 'jwt-secret';

/**
 * The HS256 secret: JWT_SECRET, or (embedded mode only) one generated on first boot and kept in
 * DATA_DIR so tokens minted by `npm run token` keep working across restarts. Null when tokens
 * are verified with a public key or JWKS instead.
 */
export function resolveJwtSecret(config: AppConfig): string | null {
  const env = config.env;
  if (env.JWT_SECRET) return env.JWT_SECRET;
  if (env.JWT_PUBLIC_KEY || env.JWKS_URL) return null;
  if (!config.embedded) {
    throw new Error('JWT_SECRET, JWT_PUBLIC_KEY or JWKS_URL must be set with DATABASE_URL.');
  }
  const dir = resolve(env.DATA_DIR);
  const file = join(dir, SECRET_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (;;) {
    if (existsSync(file)) {
      const kept = readFileSync(file, 'utf8').trim();
      if (kept.length >= MIN_SECRET_LENGTH) return kept;
      // Written by a version that could be killed mid-write: nothing was ever signed with it.
      renameSync(file, `${file}.incomplete-${Date.now()}`);
    }
    // Whole or absent whatever happens, and the service and `npm run token` starting together
    // agree on one secret: whichever creates it first, the other reads it.
    createFileOnce(file, randomBytes(48).toString('base64url'));
  }
}

/** What JWT_SECRET must be at least; a kept secret shorter than this was cut off. */
const MIN_SECRET_LENGTH = 32;
