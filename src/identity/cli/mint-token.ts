/**
 * npm run token -- --sub <id> [--email <e>] [--name <n>] [--admin] [--expires-in 24h]
 * Prints a token that the service, started with the same configuration, accepts: it expires
 * (by default after JWT_MAX_AGE, never later), its email is marked verified (whoever runs this
 * holds the signing secret and vouches for it) and --admin sets the JWT_ADMIN_CLAIM claim.
 */
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { ConfigValidationError } from '../../config/app-config.js';
import { loadAppConfig } from '../../app.config.js';
import { adminClaimFor, adminClaimRule } from '../admin-claim.js';
import { duration } from '../identity.config.js';
import { resolveJwtSecret } from '../jwt-keys.js';
import { keepNewFilesPrivate } from '../../common/files/private-files.js';

async function main(): Promise<void> {
  // It may create DATA_DIR and the secret in it.
  keepNewFilesPrivate();
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      admin: { type: 'boolean', default: false },
      'expires-in': { type: 'string' },
    },
  });
  if (!values.sub) {
    console.error(
      'Usage: npm run token -- --sub <id> [--email <e>] [--name <n>] [--admin] [--expires-in 24h]',
    );
    process.exit(2);
  }
  const config = loadAppConfig();
  const secret = resolveJwtSecret(config);
  if (!secret) {
    console.error(
      'Tokens are verified with JWT_PUBLIC_KEY or JWKS_URL: issue them from your identity provider.',
    );
    process.exit(2);
  }
  const maxAge = config.env.JWT_MAX_AGE;
  let lifetime = maxAge;
  if (values['expires-in']) {
    try {
      lifetime = duration(values['expires-in']);
    } catch (err) {
      console.error(`--expires-in ${(err as Error).message}`);
      process.exit(2);
    }
  }
  if (lifetime > maxAge) {
    console.error(`--expires-in cannot be longer than JWT_MAX_AGE (${maxAge} s).`);
    process.exit(2);
  }
  const iat = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({
    ...(values.email ? { email: values.email, email_verified: true } : {}),
    ...(values.name ? { name: values.name } : {}),
    ...(values.admin ? adminClaimFor(adminClaimRule(config.env.JWT_ADMIN_CLAIM, true)!) : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(values.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetime);
  if (config.env.JWT_ISSUER) jwt.setIssuer(config.env.JWT_ISSUER);
  if (config.env.JWT_AUDIENCE) jwt.setAudience(config.env.JWT_AUDIENCE);
  console.log(await jwt.sign(new TextEncoder().encode(secret)));
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigValidationError ? err.message : (err as Error).message);
  process.exit(1);
});
