import {
  ConfigOf,
  ConfigParseError,
  defineVariables,
  integer,
  text,
  url,
} from '../config/config-spec.js';

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

/** A duration in seconds: `3600`, `90s`, `90m`, `24h` or `7d`; from one second to 366 days. */
export const duration = (raw: string): number => {
  const m = /^(\d+)\s*(s|m|h|d)?$/i.exec(raw.trim());
  if (!m) throw new ConfigParseError('must be a duration such as 3600, 90m, 24h or 7d');
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's').toLowerCase() as 's'];
  const seconds = Number(m[1]) * unit;
  if (seconds < 1 || seconds > 366 * 86400) {
    throw new ConfigParseError('must be between 1 second and 366 days');
  }
  return seconds;
};

/** `claim` (its value must be exactly true) or `claim=value` (equal to, or a list holding, value). */
const adminClaim = (raw: string): string => {
  const value = raw.trim();
  if (value === '' || value.startsWith('=') || value.endsWith('=')) {
    throw new ConfigParseError('must be a claim name, or claim=value');
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
  JWT_ISSUER: {
    description: 'Required `iss` claim, when set. Required with JWT_PUBLIC_KEY or JWKS_URL.',
    parse: text,
  },
  JWT_AUDIENCE: {
    description: 'Required `aud` claim, when set. Required with JWT_PUBLIC_KEY or JWKS_URL.',
    parse: text,
  },
  JWT_MAX_AGE: {
    description:
      'Longest lifetime (`exp` - `iat`) accepted for HS256 tokens: 3600, 90m, 24h, 7d. HS256 tokens need `exp` and `iat`.',
    default: '24h',
    parse: duration,
  },
  JWT_ADMIN_CLAIM: {
    description:
      'The claim that makes a platform administrator: `name` (value exactly true) or `name=value` (equal to, or a list holding, value). Unset: `admin` for HS256 tokens; with JWT_PUBLIC_KEY or JWKS_URL nobody is an administrator.',
    parse: adminClaim,
  },
  JWT_CLOCK_TOLERANCE_S: {
    description: 'Allowed clock skew when checking `exp` and `nbf`, in seconds.',
    default: '30',
    parse: integer(0, 3600),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof identityVariables> {}
}

/** A provider's tokens are accepted only for this service: its issuer and audience are named. */
export function validateIdentityConfig(env: {
  JWT_PUBLIC_KEY?: string;
  JWKS_URL?: string;
  JWT_ISSUER?: string;
  JWT_AUDIENCE?: string;
}): string[] {
  const problems: string[] = [];
  for (const source of ['JWT_PUBLIC_KEY', 'JWKS_URL'] as const) {
    if (!env[source]) continue;
    if (!env.JWT_ISSUER) problems.push(`${source} needs JWT_ISSUER`);
    if (!env.JWT_AUDIENCE) problems.push(`${source} needs JWT_AUDIENCE`);
  }
  return problems;
}
