import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
} from '../context/context.types.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { countTokens } from '../llm/tokenizer.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryType } from './memory.enums.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryUsesService } from './memory-uses.service.js';

/**
 * How much each type of memory is worth in a reply. PREFERENCE (1.2) sits between
 * RELATIONSHIP and FACT: likes and dislikes shape how to answer more than plain facts do, but
 * less than what the user is working towards or does habitually.
 */
export const MEMORY_TYPE_WEIGHTS: Record<MemoryType, number> = {
  GOAL: 1.5,
  PATTERN: 1.5,
  RELATIONSHIP: 1.3,
  PREFERENCE: 1.2,
  FACT: 1.0,
  EMOTION: 0.8,
};

/** Candidates looked at per reply; the block itself holds at most MEMORY_CONTEXT_MAX_ITEMS. */
const CANDIDATES = 50;

/**
 * The memory block of a reply: the user's most useful ACTIVE memories for this legacy and
 * their global ones. Score = type weight x confidence x recency + 0.1 x reference count
 * (recency = 1 / (1 + days since last referenced, at most 30)), plus MEMORY_RELEVANCE_WEIGHT x
 * the cosine similarity between the memory and the current message. A user whose memory is
 * paused gets no memory block: pausing stops both learning and recalling.
 */
@Injectable()
export class MemoryContextProvider implements ContextSectionProvider {
  readonly section = 'memories' as const;

  constructor(
    private readonly repo: MemoryRepository,
    private readonly uses: MemoryUsesService,
    private readonly embeddings: EmbeddingService,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
  ) {}

  get maxItems(): number {
    return this.config.env.MEMORY_CONTEXT_MAX_ITEMS;
  }

  get maxTokens(): number {
    return this.config.env.MEMORY_CONTEXT_MAX_TOKENS;
  }

  async collect(request: ContextRequest): Promise<ContextItem[]> {
    if (request.user.memoryPaused || this.maxItems === 0) return [];
    const relevanceWeight = this.config.env.MEMORY_RELEVANCE_WEIGHT;
    // The assembler embeds the message once for every provider, when it offers to.
    const q =
      relevanceWeight > 0 && request.query.trim()
        ? await (request.queryVector?.() ?? this.embeddings.embedQuery(request.query))
        : null;
    const rows = await this.repo.contextCandidates({
      userId: request.user.id,
      legacyId: request.legacy.id,
      now: this.clock.now(),
      typeWeights: MEMORY_TYPE_WEIGHTS,
      q,
      relevanceWeight,
      limit: CANDIDATES,
      scoreAllMax: this.config.env.MEMORY_CONTEXT_SCORE_ALL,
    });
    return rows.map((r) => {
      const text = `- ${r.content}`;
      return {
        sourceType: 'MEMORY',
        id: r.id,
        text,
        tokens: countTokens(text),
        score: Number(r.score),
        scores: {
          typeWeight: Number(r.typeWeight),
          confidence: Number(r.confidence),
          recency: Number(r.recency),
          references: r.referenceCount,
          usefulness: Number(r.base),
          relevance: r.similarity === null ? 0 : Number(r.similarity),
          relevanceWeight,
        },
        provenance: {
          sourceType: 'MEMORY',
          sourceId: r.id,
          conversationId: r.conversationId,
          messageIds: r.sourceMessageId ? [r.sourceMessageId] : [],
          messageMetadata: r.sourceMessageId ? [r.messageMetadata ?? {}] : [],
          turnRange:
            r.sourceTurnIndex === null
              ? null
              : { start: r.sourceTurnIndex, end: r.sourceTurnIndex },
          occurredAt: r.occurredAt,
          createdAt: r.createdAt,
        },
      } satisfies ContextItem;
    });
  }

  /** Stores which memories the reply was given and counts a reference for each. */
  async markUsed(
    items: ContextItem[],
    assistantMessage: MessageEntity,
    manager: EntityManager,
  ): Promise<void> {
    const ids = items.filter((i) => i.sourceType === 'MEMORY').map((i) => i.id);
    await this.uses.record(assistantMessage, ids, manager);
  }
}
