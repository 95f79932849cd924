import { ConfigOf, decimal, defineVariables, integer } from '../config/config-spec.js';

export const signalsVariables = defineVariables({
  MEMORY_AB_HOLDOUT: {
    description:
      'Share of conversations (0 to 1) whose replies are given no memory block, assigned stably per conversation, so memoryUplift can compare the arms. 0 turns the experiment off.',
    default: '0',
    parse: decimal(0, 1),
  },
  TRIGGER_MIN_ASSEMBLIES: {
    description:
      'Context assemblies a period needs before the share and latency triggers of memoryMetricsReport may fire.',
    default: '20',
    parse: integer(1, 1_000_000),
  },
  TRIGGER_FULL_TEXT_MIN_HITS: {
    description: 'A query with fewer full-text hits than this counts as a weak full-text query.',
    default: '3',
    parse: integer(1, 100),
  },
  TRIGGER_FEW_FULL_TEXT_SHARE: {
    description:
      'Upgrade trigger: share of queries with fewer than TRIGGER_FULL_TEXT_MIN_HITS full-text hits.',
    default: '0.3',
    parse: decimal(0, 1),
  },
  TRIGGER_FALLBACK_SHARE: {
    description: 'Upgrade trigger: share of queries that needed the trigram fallback.',
    default: '0.5',
    parse: decimal(0, 1),
  },
  TRIGGER_SUMMARIES_ONLY_SHARE: {
    description: 'Upgrade trigger: share of contexts whose retrieved items are all summaries.',
    default: '0.2',
    parse: decimal(0, 1),
  },
  TRIGGER_TRUNCATION_SHARE: {
    description: 'Upgrade trigger: share of contexts that dropped a candidate for the budget.',
    default: '0.4',
    parse: decimal(0, 1),
  },
  TRIGGER_P95_LATENCY_MS: {
    description: 'Upgrade trigger: 95th percentile of context assembly time, in ms.',
    default: '3000',
    parse: integer(1, 600_000),
  },
  TRIGGER_SUMMARY_SPEND_SHARE: {
    description:
      'Upgrade trigger: share of language-model tokens spent on conversation and period summaries.',
    default: '0.25',
    parse: decimal(0, 1),
  },
  TRIGGER_FORGOT_PER_WEEK: {
    description: 'Upgrade trigger: "you forgot" complaints in user turns per week.',
    default: '3',
    parse: decimal(0, 1_000_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof signalsVariables> {}
}
