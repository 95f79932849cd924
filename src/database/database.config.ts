import { ConfigParseError, defineVariables, integer, text } from '../config/config-spec.js';

const postgresUrl = (raw: string): string => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigParseError('must be a postgres:// URL');
  }
  if (!['postgres:', 'postgresql:'].includes(parsed.protocol)) {
    throw new ConfigParseError('must be a postgres:// URL');
  }
  return raw;
};

export const databaseVariables = defineVariables({
  DATABASE_URL: {
    description:
      'PostgreSQL server with the vector and pg_trgm extensions. Unset: an embedded PostgreSQL (PGlite) persisted in DATA_DIR.',
    parse: postgresUrl,
  },
  DATA_DIR: {
    description: 'Directory of the embedded database, its lock file and the generated JWT secret.',
    default: './data',
    parse: text,
  },
  DB_POOL_SIZE: {
    description: 'Connection pool size with DATABASE_URL (the embedded database always uses 1).',
    default: '10',
    parse: integer(1, 200),
  },
  DB_CONNECT_TIMEOUT_MS: {
    description: 'Timeout for opening or acquiring a database connection.',
    default: '10000',
    parse: integer(100, 600000),
  },
  HEALTH_DB_TIMEOUT_MS: {
    description: 'Timeout of the database check behind GET /health/ready.',
    default: '2000',
    parse: integer(50, 60000),
  },
});
