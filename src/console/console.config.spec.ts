import { ConfigValidationError } from '../config/app-config.js';
import { loadAppConfig } from '../app.config.js';
import { originAllowed } from './origins.js';

const load = (env: Record<string, string>) => loadAppConfig({ JWT_SECRET: 'x'.repeat(32), ...env });

describe('CORS_ORIGINS', () => {
  it('is unset by default and reads a comma-separated list of origins', () => {
    expect(load({}).env.CORS_ORIGINS).toBeUndefined();
    expect(
      load({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).env.CORS_ORIGINS,
    ).toEqual(['https://a.example', 'http://localhost:5173']);
  });

  it.each(['https://a.example/', 'https://a.example/app', 'a.example', 'ftp://a.example', '*'])(
    'refuses %s, which is not an origin',
    (value) => expect(() => load({ CORS_ORIGINS: value })).toThrow(ConfigValidationError),
  );
});

describe('OIDC sign-in settings', () => {
  it('needs both the issuer and the client id, and a way to verify the provider’s tokens', () => {
    expect(() => load({ OIDC_ISSUER: 'https://id.example' })).toThrow(/OIDC_CLIENT_ID/);
    expect(() => load({ OIDC_CLIENT_ID: 'console' })).toThrow(/OIDC_ISSUER/);
    expect(() => load({ OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c' })).toThrow(
      /JWKS_URL/,
    );
    const config = load({
      OIDC_ISSUER: 'https://id.example',
      OIDC_CLIENT_ID: 'console',
      JWKS_URL: 'https://id.example/jwks',
      JWT_ISSUER: 'https://id.example',
      JWT_AUDIENCE: 'keepsake',
    });
    expect(config.env.OIDC_SCOPES).toBe('openid profile email');
  });
});

describe('originAllowed', () => {
  it('allows no Origin (not a browser page), the same origin and listed origins only', () => {
    expect(originAllowed(undefined, 'api.example', [])).toBe(true);
    expect(originAllowed('https://api.example', 'api.example', [])).toBe(true);
    expect(originAllowed('http://127.0.0.1:3000', '127.0.0.1:3000', [])).toBe(true);
    expect(originAllowed('https://a.example', 'api.example', ['https://a.example'])).toBe(true);
    expect(originAllowed('https://b.example', 'api.example', ['https://a.example'])).toBe(false);
    expect(originAllowed('null', 'api.example', [])).toBe(false);
  });
});
