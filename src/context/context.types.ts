import type { EntityManager } from 'typeorm';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import type { QueryVector } from '../embeddings/embedding.service.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import type { UserEntity } from '../identity/user.entity.js';
import type { LegacyEntity } from '../legacies/legacy.entity.js';

export type ContextSourceType =
  'FACT' | 'MEMORY' | 'PERIOD_SUMMARY' | 'PROFILE' | 'STORY' | 'SUMMARY' | 'TURN';

/** Sections of the agent's context, in the order they are rendered and filled. */
export const SECTION_ORDER = [
  'facts',
  'profile',
  'memories',
  'periods',
  'stories',
  'summaries',
  'turns',
] as const;
export type ContextSectionName = (typeof SECTION_ORDER)[number];

/** Where an item came from, so that every piece of context can be traced to its source. */
export interface Provenance {
  sourceType: ContextSourceType;
  /** The item's own record (RecallItem.sourceId). */
  sourceId: string;
  conversationId: string | null;
  /** The turns it came from (a summary or fact cites several). */
  messageIds: string[];
  /** Each cited turn's metadata, in the order of messageIds (an import's own ids come back). */
  messageMetadata: Record<string, unknown>[];
  turnRange: { start: number; end: number } | null;
  /** When it was said (turns) or when the item was created. */
  occurredAt: Date | null;
  createdAt: Date | null;
  /** A period summary's period, its local dates and what it was built from. */
  period?: PeriodProvenance | null;
  /** A story passage's story, title, page and character range in that page. */
  story?: StoryProvenance | null;
}

export interface StoryProvenance {
  storyId: string;
  title: string;
  page: number;
  charStart: number;
  charEnd: number;
}

export interface PeriodProvenance {
  period: string;
  start: string;
  end: string;
  /** The conversation summaries (a week) or shorter periods (a month, a year) it was built from. */
  builtFrom: string[];
}

export interface ContextItem {
  sourceType: ContextSourceType;
  id: string;
  /** The text given to the model, already formatted for its section. */
  text: string;
  /** Tokens of `text`, counted with the tokenizer. */
  tokens: number;
  /** The final ranking score (higher first). */
  score: number;
  /** The components that produced the score (dense, lexical, recency, ...). */
  scores: Record<string, number>;
  provenance: Provenance;
  /** A code chunk, preferred for code questions. */
  isCode?: boolean;
}

/** Why the context is assembled: a reply, the `context` query, or the debug view. */
export type ContextPurpose = 'REPLY' | 'CONTEXT' | 'DEBUG';

export interface ContextRequest {
  /** Set by the assembler (REPLY when not given). */
  purpose?: ContextPurpose;
  user: UserEntity;
  /**
   * Who will read the assembly when it is not `user` (a platform admin's debug view of another
   * member's conversation): sources that are their member's alone leave themselves out.
   */
  viewer?: UserEntity;
  conversation: ConversationEntity;
  legacy: LegacyEntity;
  /** The current message. */
  query: string;
  /** The turns of the recent window (already in the prompt): providers skip them. */
  recentMessageIds: ReadonlySet<string>;
  /** The first turn index of the recent window; older turns are retrievable. */
  recentStartTurn: number;
  now: Date;
  /**
   * The conversation's clock, which "yesterday" or "last week" are relative to: when its latest
   * turn was said (an imported conversation lives in its own time), else now. Set by the
   * assembler; `now` when not given.
   */
  clock?: Date;
  /** State the caller of one assembly reads back after it (the debug view). */
  shared?: Map<string, unknown>;
  /**
   * The query's vector, embedded once per assembly and shared by every provider (null when the
   * embedding model is down). Set by the assembler.
   */
  queryVector?: () => Promise<QueryVector | null>;
  /** How long making that vector took, whichever provider asked first (0 until it is made). */
  queryVectorMs?: () => number;
}

/**
 * A source of context items. Feature modules register one per section with
 * ContextAssemblerService.register() in onModuleInit; the assembler applies the budget.
 */
export interface ContextSectionProvider {
  readonly section: ContextSectionName;
  /** Caps of this section, inside the overall budget. */
  readonly maxItems?: number;
  readonly maxTokens?: number;
  /** Candidates, best first. */
  collect(request: ContextRequest): Promise<ContextItem[]>;
  /**
   * Records that these items were given to the model, in the transaction that stores the
   * assistant turn: the turn and its record stand or fall together.
   */
  markUsed?(
    items: ContextItem[],
    assistantMessage: MessageEntity,
    manager: EntityManager,
  ): Promise<void>;
}

export interface AssembledSection {
  name: ContextSectionName;
  items: ContextItem[];
  tokens: number;
}

export interface AssembledContext {
  persona: string;
  /** The system prompt: persona followed by the non-empty sections. */
  system: string;
  sections: AssembledSection[];
  /** The recent window, oldest first. */
  recent: MessageEntity[];
  /** Every retrieved item that made it in, in section order. */
  items: ContextItem[];
  /** Tokens of the retrieved sections (what the budget covers). */
  tokenCount: number;
  budget: number;
  /** True when some candidate was left out for lack of budget. */
  truncated: boolean;
  /** Candidates left out, with the reason. */
  dropped: { item: ContextItem; section: ContextSectionName; reason: string }[];
  /** Providers that failed; their sections are assembled without them. */
  failures?: { section: ContextSectionName; message: string }[];
  /** Milliseconds the assembly took. */
  totalMs?: number;
  /** The conversation is in the memory A/B holdout (MEMORY_AB_HOLDOUT): no memory block. */
  memoryHoldout?: boolean;
  /** In the holdout, the memories the block would have held (never shown to the model). */
  withheldMemories?: ContextItem[];
}

/** Told about every assembly once it is done (retrieval metrics). Must not throw. */
export interface AssemblyObserver {
  assembled(request: ContextRequest, context: AssembledContext): Promise<void>;
}
