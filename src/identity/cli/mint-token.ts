/**
 * npm run token -- --sub <id> [--email <e>] [--name <n>] [--admin] [--expires-in 30d]
 * Prints a token that the service, started with the same configuration, accepts.
 */
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { AppConfig, ConfigValidationError } from '../../config/app-config.js';
import { resolveJwtSecret } from '../jwt-keys.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      admin: { type: 'boolean', default: false },
      'expires-in': { type: 'string', default: '30d' },
    },
  });
  if (!values.sub) {
    console.error(
      'Usage: npm run token -- --sub <id> [--email <e>] [--name <n>] [--admin] [--expires-in 30d]',
    );
    process.exit(2);
  }
  const config = AppConfig.load();
  const secret = resolveJwtSecret(config);
  if (!secret) {
    console.error(
      'Tokens are verified with JWT_PUBLIC_KEY or JWKS_URL: issue them from your identity provider.',
    );
    process.exit(2);
  }
  const jwt = new SignJWT({
    ...(values.email ? { email: values.email } : {}),
    ...(values.name ? { name: values.name } : {}),
    ...(values.admin ? { admin: true } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(values.sub)
    .setIssuedAt()
    .setExpirationTime(values['expires-in']);
  if (config.env.JWT_ISSUER) jwt.setIssuer(config.env.JWT_ISSUER);
  if (config.env.JWT_AUDIENCE) jwt.setAudience(config.env.JWT_AUDIENCE);
  console.log(await jwt.sign(new TextEncoder().encode(secret)));
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigValidationError ? err.message : (err as Error).message);
  process.exit(1);
});
