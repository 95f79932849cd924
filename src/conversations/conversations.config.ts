import { ConfigOf, defineVariables, integer } from '../config/config-spec.js';

export const conversationsVariables = defineVariables({
  MESSAGE_MAX_LENGTH: {
    description: 'Maximum characters in one message.',
    default: '32000',
    parse: integer(1, 1_000_000),
  },
  METADATA_MAX_BYTES: {
    description: "Maximum size of a message's metadata, as JSON bytes.",
    default: '8192',
    parse: integer(0, 1_048_576),
  },
  IMPORT_MAX_MESSAGES: {
    description: 'Maximum messages in one importConversation call.',
    default: '5000',
    parse: integer(1, 100_000),
  },
  CONVERSATIONS_PER_USER_PER_DAY: {
    description:
      'Conversations one user may start or import in any 24 hours (deleted ones still count).',
    default: '200',
    parse: integer(1, 1_000_000),
  },
  IMPORTS_PER_USER_PER_HOUR: {
    description: 'importConversation calls one user may make in any hour.',
    default: '20',
    parse: integer(1, 1_000_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof conversationsVariables> {}
}
