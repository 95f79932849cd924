import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { loadAppConfig } from '../app.config.js';
import { AuthService } from './auth.service.js';
import { IdentityException } from './identity.exception.js';

const SECRET = 'unit-secret-that-is-at-least-32-characters-long';
const now = () => Math.floor(Date.now() / 1000);

function hs256(
  claims: Record<string, unknown>,
  times: { iat?: number | null; exp?: number | null },
) {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('u1');
  if (times.iat !== null) jwt.setIssuedAt(times.iat ?? now());
  if (times.exp !== null) jwt.setExpirationTime(times.exp ?? now() + 3600);
  return jwt.sign(new TextEncoder().encode(SECRET));
}

function service(env: Record<string, string> = {}) {
  return new AuthService(loadAppConfig({ JWT_SECRET: SECRET, ...env }));
}

async function refusal(promise: Promise<unknown>): Promise<IdentityException> {
  const error = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(IdentityException);
  expect((error as IdentityException).publicCode).toBe('UNAUTHENTICATED');
  return error as IdentityException;
}

describe('AuthService', () => {
  it('rejects a token without exp', async () => {
    const error = await refusal(service().verify(await hs256({}, { exp: null })));
    expect(error.message).toMatch(/exp/);
  });

  it('rejects an HS256 token without iat: its lifetime cannot be bounded', async () => {
    const error = await refusal(service().verify(await hs256({}, { iat: null })));
    expect(error.message).toMatch(/iat/);
  });

  it('caps exp - iat at JWT_MAX_AGE for HS256 tokens (default 24 h)', async () => {
    const auth = service();
    const t = now();
    await expect(
      auth.verify(await hs256({}, { iat: t, exp: t + 24 * 3600 })),
    ).resolves.toMatchObject({ subject: 'u1' });
    const error = await refusal(auth.verify(await hs256({}, { iat: t, exp: t + 24 * 3600 + 1 })));
    expect(error.message).toMatch(/JWT_MAX_AGE|lifetime/);
    const short = service({ JWT_MAX_AGE: '10m' });
    await refusal(short.verify(await hs256({}, { iat: t, exp: t + 601 })));
    await expect(short.verify(await hs256({}, { iat: t, exp: t + 600 }))).resolves.toBeTruthy();
    // An iat in the future would stretch the lifetime past the cap.
    const later = t + 10 * 365 * 86400;
    await refusal(auth.verify(await hs256({}, { iat: later, exp: later + 3600 })));
  });

  it('returns when the token expires', async () => {
    const exp = now() + 120;
    const claims = await service().verify(await hs256({}, { exp }));
    expect(claims.expiresAt.getTime()).toBe(exp * 1000);
  });

  it('honours admin only from JWT_ADMIN_CLAIM, and only when it is exactly true', async () => {
    expect((await service().verify(await hs256({ admin: true }, {}))).admin).toBe(true);
    expect((await service().verify(await hs256({ admin: 'true' }, {}))).admin).toBe(false);
    const custom = service({ JWT_ADMIN_CLAIM: 'keepsake_admin' });
    expect((await custom.verify(await hs256({ admin: true }, {}))).admin).toBe(false);
    expect((await custom.verify(await hs256({ keepsake_admin: true }, {}))).admin).toBe(true);
    const role = service({ JWT_ADMIN_CLAIM: 'roles=keepsake-admin' });
    expect((await role.verify(await hs256({ roles: ['user', 'keepsake-admin'] }, {}))).admin).toBe(
      true,
    );
    expect((await role.verify(await hs256({ roles: ['user'] }, {}))).admin).toBe(false);
    expect((await role.verify(await hs256({ admin: true }, {}))).admin).toBe(false);
  });

  it('keeps the email only when email_verified is exactly true', async () => {
    const auth = service();
    const email = 'a@example.com';
    expect((await auth.verify(await hs256({ email, email_verified: true }, {}))).email).toBe(email);
    expect((await auth.verify(await hs256({ email }, {}))).email).toBeNull();
    expect(
      (await auth.verify(await hs256({ email, email_verified: 'true' }, {}))).email,
    ).toBeNull();
    expect(
      (await auth.verify(await hs256({ email, email_verified: 'false' }, {}))).email,
    ).toBeNull();
    expect((await auth.verify(await hs256({ email, email_verified: false }, {}))).email).toBeNull();
  });

  describe('with an identity provider key', () => {
    it('honours admin from an asymmetric token only when JWT_ADMIN_CLAIM is set', async () => {
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const pem = await exportSPKI(publicKey);
      const sign = (claims: Record<string, unknown>) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256' })
          .setSubject('idp-user')
          .setIssuer('https://idp.example.com/')
          .setAudience('keepsake')
          .setIssuedAt()
          .setExpirationTime('2h')
          .sign(privateKey);
      const base = {
        JWT_PUBLIC_KEY: pem,
        JWT_ISSUER: 'https://idp.example.com/',
        JWT_AUDIENCE: 'keepsake',
      };
      const plain = new AuthService(loadAppConfig(base));
      expect((await plain.verify(await sign({ admin: true }))).admin).toBe(false);
      const configured = new AuthService(
        loadAppConfig({ ...base, JWT_ADMIN_CLAIM: 'https://keepsake/admin' }),
      );
      expect((await configured.verify(await sign({ 'https://keepsake/admin': true }))).admin).toBe(
        true,
      );
      // JWT_MAX_AGE is for this service's own HS256 tokens; the provider sets its own lifetimes.
      expect((await plain.verify(await sign({}))).subject).toBe('idp-user');
    });
  });
});
