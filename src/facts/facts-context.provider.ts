import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
} from '../context/context.types.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { quoted } from '../context/quoted.js';
import { countTokens } from '../llm/tokenizer.js';
import { FactVisibility } from './fact.enums.js';
import { seesSources } from './fact-visibility.js';
import { VisibleFactRepository } from './visible-fact.repository.js';

/**
 * The 'facts' section of the agent's context: the legacy's active facts the user may see (their
 * own and the shared ones), each marked personal or shared with its category, the most relevant
 * to the message and the most mentioned first. The assembler applies the token budget.
 */
@Injectable()
export class FactsContextProvider implements ContextSectionProvider {
  readonly section = 'facts' as const;

  constructor(
    private readonly facts: VisibleFactRepository,
    private readonly embeddings: EmbeddingService,
    private readonly conversations: ConversationsService,
    private readonly config: AppConfig,
  ) {}

  get maxItems(): number {
    return this.config.env.FACTS_CONTEXT_MAX_ITEMS;
  }

  async collect(request: ContextRequest): Promise<ContextItem[]> {
    if (this.maxItems === 0) return [];
    const query = request.query.trim();
    // One query vector per assembly, shared with the other providers when the assembler offers it.
    const vector = !query
      ? null
      : request.queryVector
        ? await request.queryVector()
        : await this.embeddings.embedQuery(query);
    const rows = await this.facts.forContext(
      request.legacy.id,
      request.user.id,
      query,
      vector,
      this.maxItems,
    );
    // Where a fact was said is traced for the viewer's own facts only: another member's
    // conversations, and their messages' metadata, stay theirs.
    const own = rows.filter((f) => seesSources(f, request.user.id));
    const messages = await this.conversations.findMessagesByIds([
      ...new Set(own.flatMap((f) => f.sourceMessageIds)),
    ]);
    const metadataOf = new Map(messages.map((m) => [m.id, m.metadata]));
    return rows.map((fact) => {
      const mine = seesSources(fact, request.user.id);
      const marker = mine && fact.visibility === FactVisibility.PRIVATE ? 'personal' : 'shared';
      // Another member's words are quoted data: whatever they hold (a line break, a heading, an
      // instruction) stays inside the quotes, never a line of the prompt of its own.
      const text = mine
        ? `- [${fact.category.toLowerCase()}, ${marker}] ${fact.content}`
        : `- [${fact.category.toLowerCase()}, shared by another member] ${quoted(fact.content)}`;
      const messageIds = mine ? fact.sourceMessageIds : [];
      return {
        sourceType: 'FACT',
        id: fact.id,
        text,
        tokens: countTokens(text),
        score: Number(fact.score),
        scores: {
          dense: fact.dense === null ? 0 : Number(fact.dense),
          lexical: Number(fact.lexical),
          mentions: Number(fact.mentions),
          confidence: Number(fact.confidence),
        },
        provenance: {
          sourceType: 'FACT',
          sourceId: fact.id,
          conversationId: mine ? fact.sourceConversationId : null,
          messageIds,
          messageMetadata: messageIds.map((id) => metadataOf.get(id) ?? {}),
          turnRange:
            mine && fact.sourceRangeStart !== null && fact.sourceRangeEnd !== null
              ? { start: fact.sourceRangeStart, end: fact.sourceRangeEnd }
              : null,
          occurredAt: fact.validFrom,
          createdAt: fact.createdAt,
        },
      };
    });
  }
}
