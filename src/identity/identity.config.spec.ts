import { ConfigValidationError } from '../config/app-config.js';
import { loadAppConfig } from '../app.config.js';

const PEM =
  '-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\\n-----END PUBLIC KEY-----';

function problems(env: Record<string, string>): string[] {
  try {
    loadAppConfig(env);
  } catch (err) {
    if (err instanceof ConfigValidationError) return err.problems;
    throw err;
  }
  return [];
}

describe('identity configuration', () => {
  it('requires JWT_ISSUER and JWT_AUDIENCE with JWT_PUBLIC_KEY, naming both', () => {
    const found = problems({ JWT_PUBLIC_KEY: PEM });
    expect(found.join('\n')).toMatch(/JWT_PUBLIC_KEY needs JWT_ISSUER/);
    expect(found.join('\n')).toMatch(/JWT_PUBLIC_KEY needs JWT_AUDIENCE/);
    expect(problems({ JWT_PUBLIC_KEY: PEM, JWT_ISSUER: 'https://idp/' }).join('\n')).toMatch(
      /JWT_AUDIENCE/,
    );
  });

  it('requires JWT_ISSUER and JWT_AUDIENCE with JWKS_URL', () => {
    const found = problems({ JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' });
    expect(found.join('\n')).toMatch(/JWKS_URL needs JWT_ISSUER/);
    expect(found.join('\n')).toMatch(/JWKS_URL needs JWT_AUDIENCE/);
    expect(
      problems({
        JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
        JWT_ISSUER: 'https://idp.example.com/',
        JWT_AUDIENCE: 'keepsake',
      }),
    ).toEqual([]);
  });

  it('reads JWT_MAX_AGE as a duration (default 24 h) and refuses nonsense', () => {
    expect(loadAppConfig({}).env.JWT_MAX_AGE).toBe(24 * 3600);
    expect(loadAppConfig({ JWT_MAX_AGE: '90m' }).env.JWT_MAX_AGE).toBe(5400);
    expect(loadAppConfig({ JWT_MAX_AGE: '3600' }).env.JWT_MAX_AGE).toBe(3600);
    expect(loadAppConfig({ JWT_MAX_AGE: '7d' }).env.JWT_MAX_AGE).toBe(7 * 86400);
    expect(problems({ JWT_MAX_AGE: 'forever' }).join('\n')).toMatch(/JWT_MAX_AGE/);
    expect(problems({ JWT_MAX_AGE: '0' }).join('\n')).toMatch(/JWT_MAX_AGE/);
  });
});
