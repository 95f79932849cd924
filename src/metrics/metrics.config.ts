import {
  bool,
  ConfigOf,
  ConfigParseError,
  defineVariables,
  integer,
} from '../config/config-spec.js';

const token = (raw: string): string => {
  if (raw.length < 16) throw new ConfigParseError('must be at least 16 characters');
  return raw;
};

export const metricsVariables = defineVariables({
  METRICS_ENABLED: {
    description:
      'Serve GET /metrics in the Prometheus text format (404 when off). Keep it off the public internet, or set METRICS_TOKEN.',
    default: 'false',
    parse: bool,
  },
  METRICS_TOKEN: {
    description:
      'When set, /metrics answers only requests with `Authorization: Bearer <token>` (16+ characters), and GET /health/ready gives its details (free disk, models, backups) only to them; without it nobody gets them.',
    parse: token,
  },
  METRICS_DB_REFRESH_MS: {
    description:
      'How long the gauges read from the database (job queue, embedding backlog) are reused between scrapes, in ms.',
    default: '15000',
    parse: integer(0, 3_600_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof metricsVariables> {}
}
