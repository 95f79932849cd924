import { ConfigOf, decimal, defineVariables, integer } from '../config/config-spec.js';

export const memoriesVariables = defineVariables({
  MEMORY_MIN_CONFIDENCE: {
    description:
      'Extracted memories below this confidence (0 to 1) are not saved. Medical and financial claims are capped at 0.4, so the default never saves them.',
    default: '0.7',
    parse: decimal(0, 1),
  },
  MEMORY_DUPLICATE_SIMILARITY: {
    description:
      'Cosine similarity at or above which a new memory restates an existing one: no row is added, the existing one is referenced again.',
    default: '0.85',
    parse: decimal(0, 1),
  },
  MEMORY_EXTRACTIONS_PER_MINUTE: {
    description:
      'Memory extractions per user per minute; the excess is deferred (the job waits), never dropped.',
    default: '60',
    parse: integer(1, 100_000),
  },
  MEMORY_MAX_ACTIVE: {
    description:
      'Active memories per user per scope (one legacy, or global). Past it, the least referenced and oldest are archived, not deleted.',
    default: '1000',
    parse: integer(1, 1_000_000),
  },
  MEMORY_RETENTION_AGE_MONTHS: {
    description:
      'The daily retention task archives memories older than this that were not referenced recently (MEMORY_RETENTION_UNREFERENCED_MONTHS), unless the user chose longTermMemory.',
    default: '24',
    parse: integer(1, 1200),
  },
  MEMORY_RETENTION_UNREFERENCED_MONTHS: {
    description:
      'See MEMORY_RETENTION_AGE_MONTHS: months without a reference before retention applies.',
    default: '6',
    parse: integer(1, 1200),
  },
  MEMORY_UNDO_DAYS: {
    description:
      'Days a forgotten memory can be restored; then the purge task deletes it and its vectors for good.',
    default: '30',
    parse: integer(0, 3650),
  },
  MEMORY_CONTEXT_MAX_ITEMS: {
    description: 'Memories in the memory block of one reply.',
    default: '10',
    parse: integer(0, 100),
  },
  MEMORY_CONTEXT_MAX_TOKENS: {
    description: 'Tokens of the memory block of one reply (inside CONTEXT_TOKEN_BUDGET).',
    default: '600',
    parse: integer(0, 2000),
  },
  MEMORY_CONTEXT_SCORE_ALL: {
    description:
      'Up to this many active memories in scope, the memory block scores each by similarity; beyond it, only the 200 most useful and the 200 nearest (HNSW).',
    default: '2000',
    parse: integer(0, 1_000_000),
  },
  MEMORY_RELEVANCE_WEIGHT: {
    description:
      "Weight of the memory's semantic similarity to the current message, added to its usefulness score (type weight x confidence x recency + 0.1 x references).",
    default: '1',
    parse: decimal(0, 100),
  },
  MEMORY_SEARCH_MIN_SIMILARITY: {
    description:
      'memories(filter: { search }) also matches by meaning: cosine similarity at or above this.',
    default: '0.5',
    parse: decimal(0, 1),
  },
  MEMORY_MAX_LENGTH: {
    description: 'Characters in one memory (rememberThis, imports).',
    default: '1000',
    parse: integer(10, 2000),
  },
  MEMORY_IMPORT_MAX: {
    description: 'Memories in one importMemories call.',
    default: '5000',
    parse: integer(1, 100_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof memoriesVariables> {}
}
