import type { JsonSchema } from './json-schema-lite.js';
import { ModelCall } from './model-usage.js';

/** Nest injection token of the configured `LanguageModel`. */
export const LANGUAGE_MODEL = Symbol('LANGUAGE_MODEL');

export type ChatRole = 'USER' | 'ASSISTANT';

export interface SummaryTurn {
  turnIndex: number;
  role: ChatRole;
  content: string;
  occurredAt: Date;
}

export interface SummarizeTurnsInput {
  /** The person being remembered. */
  legacyName: string;
  turns: SummaryTurn[];
  /** Facts already stored for the legacy, so they are not extracted again. */
  existingFacts?: string[];
}

export const FACT_CATEGORIES = [
  'PERSONALITY',
  'HOBBY',
  'RELATIONSHIP',
  'MILESTONE',
  'OCCUPATION',
  'PREFERENCE',
  'HABIT',
  'OTHER',
] as const;
export type FactCategory = (typeof FACT_CATEGORIES)[number];

/** A fact about the legacy that the user stated or clearly implied. */
export interface LegacyFact {
  content: string;
  category: FactCategory;
  /** 0..1 */
  confidence: number;
  /** Turns the fact was taken from; always among the input's turn indexes. */
  sourceTurnIndexes: number[];
}

export interface StructuredSummary {
  facts: string[];
  preferences: string[];
  decisions: string[];
  todos: string[];
  entities: string[];
}

export interface TurnsSummary {
  /** 2-4 sentences: key topics and emotional tone. */
  summary: string;
  structured: StructuredSummary;
  facts: LegacyFact[];
}

export interface ExtractMemoriesInput {
  userTurn: string;
  assistantTurn?: string;
  /** Memories already stored for the user, so they are not extracted again. */
  existingMemories?: string[];
}

export const MEMORY_TYPES = [
  'FACT',
  'EMOTION',
  'GOAL',
  'PATTERN',
  'RELATIONSHIP',
  'PREFERENCE',
] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** Something worth remembering about the user (never about the assistant). */
export interface ExtractedMemory {
  content: string;
  type: MemoryType;
  /** 0..1 */
  confidence: number;
}

export interface ExtractedMemories {
  /** 0-3 memories. */
  memories: ExtractedMemory[];
}

export const SUMMARY_PERIODS = ['WEEK', 'MONTH', 'YEAR'] as const;
export type SummaryPeriodName = (typeof SUMMARY_PERIODS)[number];

/** One thing a period summary is built from: a conversation summary, unsummarized turns, or a shorter period's summary. */
export interface PeriodSource {
  /** CHUNK: a conversation summary; TURNS: turns no summary covers yet; WEEK, MONTH: a stored period summary. */
  kind: 'CHUNK' | 'TURNS' | 'WEEK' | 'MONTH';
  /** Local dates (YYYY-MM-DD) the source covers, both ends included. */
  from: string;
  to: string;
  /**
   * The share of the source that falls inside the period (0..1]: a week at a month's edge
   * counts by its days in the month.
   */
  weight: number;
  text: string;
  /** The user's own words, for TURNS (role USER only); empty otherwise. */
  userTurns: string[];
  themes: string[];
  people: string[];
  places: string[];
  /** Stored periods' tone and patterns; conversation summaries have neither. */
  emotionalTone: string | null;
  patterns: string[];
  conversationIds: string[];
}

export interface SummarizePeriodInput {
  legacyName: string;
  period: SummaryPeriodName;
  /** Local dates, both ends included. */
  start: string;
  end: string;
  sources: PeriodSource[];
  conversationCount: number;
  turnCount: number;
}

export interface PeriodSummaryText {
  /** 3-6 sentences. */
  summary: string;
  emotionalTone: string;
  keyThemes: string[];
  recurringPatterns: string[];
  people: string[];
  places: string[];
}

/** A function the model may call while it replies (the OpenAI tools API). */
export interface ReplyTool {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ReplyTools {
  definitions: ReplyTool[];
  /**
   * Runs one call the model made, with its arguments as the model wrote them (JSON text, not
   * yet validated), and answers with the text given back to the model. Arguments that do not
   * validate are answered with what was wrong, never thrown.
   */
  execute(name: string, argumentsJson: string): Promise<string>;
}

export interface ReplyInput {
  system: string;
  /**
   * The recent turns; in a conversation several members hold, a member's turn names its
   * `speaker` (the offline notice, which all of them read, labels it so).
   */
  messages: { role: ChatRole; content: string; speaker?: string }[];
  /** Offered to a model that can call tools; models that cannot ignore them. */
  tools?: ReplyTools;
  /**
   * Aborted when nobody waits for the reply any more: a model that can stop does, and answers
   * with what it had (finishReason `cancelled`).
   */
  signal?: AbortSignal;
}

export interface Reply {
  text: string;
  model: string;
  usage: { promptTokens: number; completionTokens: number };
  /** `stop`, `length` (cut at the token limit), `cancelled`, ... as reported by the server. */
  finishReason: string;
}

/** Every task result carries its usage record (also handed to the ModelUsageRecorder). */
export type WithCall<T> = T & { call: ModelCall };

/**
 * Task-level language model. Outputs are validated before they are returned: an answer that
 * does not conform raises ModelOutputError, an unreachable model ModelUnavailableError.
 */
export interface LanguageModel {
  /** `local:heuristic`, `embedded:<model>-<pin>` or `openai:<model>`. */
  readonly modelId: string;
  /** False for the offline heuristics: their replies are notices, not answers. */
  readonly generates: boolean;
  /** Whether `reply` offers tools: false offline, and once a server has refused them. */
  readonly acceptsTools: boolean;
  summarizeTurns(input: SummarizeTurnsInput): Promise<WithCall<TurnsSummary>>;
  extractMemories(input: ExtractMemoriesInput): Promise<WithCall<ExtractedMemories>>;
  /** A week, month or year looked back on, from the summaries it covers. */
  summarizePeriod(input: SummarizePeriodInput): Promise<WithCall<PeriodSummaryText>>;
  /** Streams when `onDelta` is given; the result holds the whole text either way. */
  reply(input: ReplyInput, onDelta?: (text: string) => void): Promise<WithCall<Reply>>;
  /**
   * A recall question made easier to search for: a short hypothetical answer and, for a
   * question that asks several things, one question per thing. Only models that write text
   * have it: the offline heuristics have nothing honest to offer.
   */
  rewriteQuery?(input: RewriteQueryInput): Promise<WithCall<QueryRewrite>>;
}

export interface RewriteQueryInput {
  question: string;
  /** The person the legacy remembers. */
  legacyName: string;
}

export interface QueryRewrite {
  /** What the conversations might say that answers it, in their words (one to three sentences). */
  answer: string;
  /** At most three self-contained questions when it asks several things; otherwise empty. */
  subQuestions: string[];
}
