import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return secret;
}
