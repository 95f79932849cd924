import { ConfigOf, decimal, defineVariables, duration, integer } from '../config/config-spec.js';

export const factsVariables = defineVariables({
  FACT_DUPLICATE_THRESHOLD: {
    description:
      "Cosine similarity at or above which a new fact restates one of the same member's active facts: no new row, its mention count goes up.",
    default: '0.85',
    parse: decimal(0, 1),
  },
  FACT_RELATED_THRESHOLD: {
    description:
      'Cosine similarity at or above which two facts are about the same thing, so that a later change ("retired from teaching") supersedes the older fact.',
    default: '0.6',
    parse: decimal(0, 1),
  },
  FACT_PURGE_AFTER: {
    description:
      'How long a deleted fact can be restored; an hourly task then removes it for good: the row, every version in its history, its sources and its vectors (90s, 15m, 24h, 30d).',
    default: '30d',
    parse: duration('1m', '3650d'),
  },
  FACT_MIN_CONFIDENCE: {
    description: 'Facts the model extracts with a lower confidence are not stored.',
    default: '0.7',
    parse: decimal(0, 1),
  },
  FACT_SEARCH_MIN_SIMILARITY: {
    description:
      'Cosine similarity a fact needs to match `facts(filter: { search })` by meaning (it must also be within 0.1 of the closest fact).',
    default: '0.45',
    parse: decimal(0, 1),
  },
  FACTS_CONTEXT_MAX_ITEMS: {
    description: "Facts offered to the agent's context per reply (within the token budget).",
    default: '30',
    parse: integer(0, 500),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof factsVariables> {}
}
