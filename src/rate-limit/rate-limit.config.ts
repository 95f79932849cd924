import { ConfigOf, defineVariables, integer } from '../config/config-spec.js';

export const rateLimitVariables = defineVariables({
  RATE_LIMIT_PER_MINUTE: {
    description:
      'Operations one signed-in user may make per minute, over HTTP and WebSocket together (each root field counts, aliases too; a subscription counts when it starts). Beyond: RATE_LIMITED with retryAfterSeconds. Per instance.',
    default: '600',
    parse: integer(1, 1_000_000),
  },
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: {
    description:
      'Operations per minute from one IP address without a valid token (refused as UNAUTHENTICATED until then, RATE_LIMITED beyond). Per instance.',
    default: '60',
    parse: integer(1, 1_000_000),
  },
  MODEL_CALLS_PER_USER_PER_MINUTE: {
    description:
      'Language-model work one user may cause per minute: replies (sendMessage), summaries (summarizeNow and the summarization jobs) and memory extraction. Asked for directly beyond it: RATE_LIMITED; in the background: deferred, never dropped. Per instance.',
    default: '30',
    parse: integer(1, 100_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof rateLimitVariables> {}
}
