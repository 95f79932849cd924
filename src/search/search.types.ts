import type { TimeRange } from './time-expressions.js';

/** Searchable kinds, as stored in embeddings.kind. */
export type SourceKind = 'segment' | 'summary' | 'fact' | 'memory' | 'story';
export const SOURCE_KINDS: SourceKind[] = ['segment', 'summary', 'fact', 'memory', 'story'];

/** Where a candidate was found: the current conversation, or after widening. */
export type SearchScope = 'current' | 'wider';

export type PathName = 'dense' | 'lexical' | 'trigram' | 'time' | 'standing';
export const PATH_NAMES: PathName[] = ['dense', 'lexical', 'trigram', 'time', 'standing'];

export interface PathHit {
  /** Cosine similarity (dense), rank divided by the best rank of its source (lexical), trigram similarity, or 1 (time). */
  score: number;
  /** 1-based rank within the path and source. */
  rank: number;
  /** The raw full-text rank, before normalization. */
  raw?: number;
}

/** A row found by one or more paths, with what ranking and provenance need. */
export interface Candidate {
  kind: SourceKind;
  id: string;
  scope: SearchScope;
  paths: Partial<Record<PathName, PathHit>>;
  /** The rarity-weighted share of the query's words the item holds (0..1). */
  coverage: number;
  text: string;
  conversationId: string | null;
  /** Segments: their turn; summaries: their range. */
  turnStart: number | null;
  turnEnd: number | null;
  /** Segments: the message and the chunk's position in it. */
  messageId: string | null;
  position: number | null;
  isCode: boolean;
  tokens: number;
  /** When it was said (a range for summaries), or created. */
  occurredFrom: Date | null;
  occurredTo: Date | null;
  /** Segments: the period the turn tells of ("last Friday"), if it names one. */
  toldFrom?: Date | null;
  toldTo?: Date | null;
  createdAt: Date;
  /** Facts and memories: the author or owner. */
  ownerId: string | null;
  /** Facts: SHARED or PRIVATE; memories: their type; summaries and segments: null. */
  label: string | null;
  /** Facts: the turns they came from. */
  sourceMessageIds: string[];
  /** Segments: the speaker and photo caption given with the turn. */
  speaker: string | null;
  caption: string | null;
  /** Facts: their category. */
  category?: string | null;
  /** Story passages: the story, its title, and where in it. */
  story?: {
    storyId: string;
    title: string;
    page: number;
    charStart: number;
    charEnd: number;
  } | null;
}

/** The score components of a fused candidate, all reported by debug and provenance. */
export interface ScoreComponents {
  dense: number;
  lexical: number;
  trigram: number;
  identifier: number;
  time: number;
  code: number;
  neighbor: number;
  /** 1 for a turn by a speaker the query names ("What did Mel paint?"). */
  speaker: number;
  /** The share of the turn's text that asks questions (it tells less than it asks). */
  question: number;
  /** 1 for a turn the agent wrote (a reply, not a member's words). */
  agent: number;
  /** 1 for a member's standing instruction or preference (standing.ts). */
  standing: number;
  /** Before the time, code and neighbour adjustments. */
  base: number;
  /** Reciprocal rank fusion sum, with SEARCH_FUSION=rrf. */
  rrf: number;
}

export interface Ranked extends Candidate {
  score: number;
  components: ScoreComponents;
  /** Good enough to count against widening (see SEARCH_GOOD_HIT). */
  good: boolean;
}

export interface QueryFeatures {
  text: string;
  identifiers: string[];
  code: boolean;
  refersBack: boolean;
  /** It asks for a summary or recap (query-analysis.ts): the agent's replies are not lowered. */
  asksSummary: boolean;
  timeRange: TimeRange | null;
  /** The conversation's clock the time range is relative to. */
  clock: Date;
}
