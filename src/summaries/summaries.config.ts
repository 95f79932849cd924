import { ConfigOf, cron, defineVariables, integer } from '../config/config-spec.js';

export const summariesVariables = defineVariables({
  SUMMARIZATION_THRESHOLD: {
    description:
      'Unsummarized turns a conversation may hold; above it, its oldest SUMMARIZATION_BATCH unsummarized turns are summarized.',
    default: '30',
    parse: integer(1, 100_000),
  },
  SUMMARIZATION_BATCH: {
    description: 'Turns summarized together into one conversation chunk (one model call).',
    default: '20',
    parse: integer(1, 500),
  },
  SUMMARIZATION_BATCHES_PER_JOB: {
    description:
      'Chunks one summarization job writes before handing the rest of a long backlog (an import) to a follow-up job.',
    default: '5',
    parse: integer(1, 1000),
  },
  SUMMARIZATION_RETRY_MS: {
    description:
      'How long summarization waits when the language or embedding model is unavailable, before trying the same turns again.',
    default: '60000',
    parse: integer(10, 86_400_000),
  },
  SUMMARIZATION_SWEEP_CRON: {
    description:
      'When the sweeper looks for conversations over the threshold that no job is handling (after downtime, or a threshold change).',
    default: '*/10 * * * *',
    parse: cron,
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof summariesVariables> {}
}
