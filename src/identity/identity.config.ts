import { ConfigParseError, defineVariables, integer, text, url } from '../config/config-spec.js';

const secret = (raw: string): string => {
  if (raw.length < 32) throw new ConfigParseError('must be at least 32 characters');
  return raw;
};

const pem = (raw: string): string => {
  const value = raw.replace(/\\n/g, '\n');
  if (!value.includes('-----BEGIN PUBLIC KEY-----')) {
    throw new ConfigParseError('must be a PEM public key (-----BEGIN PUBLIC KEY-----)');
  }
  return value;
};

export const identityVariables = defineVariables({
  JWT_SECRET: {
    description:
      'HS256 signing secret (32+ characters). Unset with the embedded database: generated once into DATA_DIR/jwt-secret.',
    parse: secret,
  },
  JWT_PUBLIC_KEY: {
    description:
      'PEM public key (RS256, ES256 or EdDSA) of an identity provider; tokens are then verified with it instead of JWT_SECRET.',
    parse: pem,
  },
  JWKS_URL: {
    description: 'JWKS endpoint of an identity provider; tokens are then verified against it.',
    parse: url,
  },
  JWT_ISSUER: { description: 'Required `iss` claim, when set.', parse: text },
  JWT_AUDIENCE: { description: 'Required `aud` claim, when set.', parse: text },
  JWT_CLOCK_TOLERANCE_S: {
    description: 'Allowed clock skew when checking `exp` and `nbf`, in seconds.',
    default: '30',
    parse: integer(0, 3600),
  },
});
