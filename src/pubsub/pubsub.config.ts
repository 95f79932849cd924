import { defineVariables, oneOf } from '../config/config-spec.js';

export const pubsubVariables = defineVariables({
  EVENT_BUS: {
    description:
      'Where subscription events travel. auto: PostgreSQL LISTEN/NOTIFY with DATABASE_URL (every instance sees every event), in-process with the embedded database (one process by construction). memory or postgres force one.',
    default: 'auto',
    parse: oneOf('auto', 'memory', 'postgres'),
  },
});
