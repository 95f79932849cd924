import { ConfigOf, defineVariables, duration, oneOf } from '../config/config-spec.js';

export const pubsubVariables = defineVariables({
  EVENT_BUS: {
    description:
      'Where subscription events travel. auto: PostgreSQL LISTEN/NOTIFY with DATABASE_URL (every instance sees every event), in-process with the embedded database (one process by construction). memory or postgres force one.',
    default: 'auto',
    parse: oneOf('auto', 'memory', 'postgres'),
  },
  EVENT_PAYLOAD_RETENTION: {
    description:
      'How long an event too large for NOTIFY stays parked in event_payloads for the instances to read; a task every five minutes deletes older ones (30s, 5m, 1h).',
    default: '5m',
    parse: duration('10s', '7d'),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof pubsubVariables> {}
}

/** The Postgres event bus talks through the server: the embedded database has no LISTEN. */
export function validatePubsubConfig(env: { EVENT_BUS: string; DATABASE_URL?: string }): string[] {
  return env.EVENT_BUS === 'postgres' && !env.DATABASE_URL
    ? ['EVENT_BUS=postgres needs DATABASE_URL']
    : [];
}
