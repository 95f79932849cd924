import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { MessageRole } from '../conversations/message-role.enum.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { FactCategory } from '../facts/fact.enums.js';
import type { FactEvent } from '../facts/fact-events.service.js';
import { ExtractedFact, FactWriterService } from '../facts/fact-writer.service.js';
import { LANGUAGE_MODEL } from '../llm/language-model.js';
import type { LanguageModel, TurnsSummary, WithCall } from '../llm/language-model.js';
import { ModelOutputError } from '../llm/model.errors.js';
import { countTokens } from '../llm/tokenizer.js';
import { ConversationChunkEntity } from './conversation-chunk.entity.js';
import {
  ChunkTurn,
  ConversationChunkRepository,
  SUMMARY_KIND,
  SummaryProgress,
} from './conversation-chunk.repository.js';

/** The embedding model could not embed the summary or its facts: try the range again later. */
export class EmbeddingsUnavailable extends Error {
  constructor() {
    super('embeddings unavailable: summarization waits for the embedding model');
  }
}

/** A range's summary, facts and vectors, made before the transaction that writes them. */
export type PreparedChunk = {
  summary: WithCall<TurnsSummary>;
  content: string;
  facts: ExtractedFact[];
  chunkVectors: Awaited<ReturnType<EmbeddingService['embedForStorage']>>;
  prepared: Awaited<ReturnType<FactWriterService['prepare']>>;
};

/**
 * One chunk of a conversation: the model's summary of a range of turns, the facts worth keeping
 * from them and the vectors, made outside any transaction; then written, with the facts, in the
 * caller's transaction.
 */
@Injectable()
export class ChunkWriterService {
  constructor(
    private readonly chunks: ConversationChunkRepository,
    private readonly facts: FactWriterService,
    private readonly embeddings: EmbeddingService,
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
  ) {}

  async rangeTurns(
    conversationId: string,
    range: { start: number; end: number },
  ): Promise<ChunkTurn[]> {
    const turns = await this.chunks.turns(conversationId, range.start, range.end);
    if (turns.length !== range.end - range.start + 1) {
      throw new Error(
        `conversation ${conversationId} misses turns in ${range.start}..${range.end}`,
      );
    }
    return turns;
  }

  /** The model's summary of the turns, its facts and the vectors, before any transaction. */
  async prepareChunk(legacyName: string, turns: ChunkTurn[]): Promise<PreparedChunk> {
    const said = turns.filter((t) => !t.placeholder);
    const summary = await this.llm.summarizeTurns({
      legacyName,
      turns: said.map((t) => ({
        turnIndex: t.turnIndex,
        role: t.role,
        content: t.content,
        occurredAt: new Date(t.occurredAt),
      })),
      // Facts are compared with the stored ones here, so a restatement counts as a mention.
      existingFacts: [],
    });
    const content = summary.summary.trim();
    if (!content) {
      throw new ModelOutputError('The summary is empty.', {
        task: 'summarizeTurns',
        model: summary.call.model,
        attempts: summary.call.attempts,
      });
    }
    const facts = this.factsOf(summary, said);
    const chunkVectors = await this.embeddings.embedForStorage([content]);
    const prepared = await this.facts.prepare(facts.map((f) => f.content));
    const searchModel = (await this.embeddings.searchModel()).model;
    if (
      !chunkVectors.some((e) => e.model === searchModel) ||
      (facts.length > 0 && !prepared.comparison)
    ) {
      throw new EmbeddingsUnavailable();
    }
    return { summary, content, facts, chunkVectors, prepared };
  }

  async writeChunk(
    m: EntityManager,
    progress: SummaryProgress,
    legacyName: string,
    range: { start: number; end: number },
    turns: ChunkTurn[],
    made: PreparedChunk,
  ): Promise<{ chunk: ConversationChunkEntity | null; events: FactEvent[] }> {
    const stored = await this.chunks.insert(m, {
      conversationId: progress.conversationId,
      legacyId: progress.legacyId,
      userId: progress.userId,
      rangeStart: range.start,
      rangeEnd: range.end,
      content: made.content,
      structured: made.summary.structured,
      turnCount: turns.length,
      tokenCount: countTokens(made.content),
      model: made.summary.call.model,
      promptVersion: made.summary.call.promptVersion ?? null,
      firstOccurredAt: turns[0].occurredAt,
      lastOccurredAt: turns[turns.length - 1].occurredAt,
    });
    if (!stored) return { chunk: null, events: [] };
    await this.embeddings.store(
      SUMMARY_KIND,
      [{ id: stored.id, legacyId: stored.legacyId, userId: stored.userId }],
      made.chunkVectors,
      m,
    );
    const events = await this.facts.applyExtracted(
      m,
      {
        legacyId: progress.legacyId,
        legacyName,
        conversationId: progress.conversationId,
        chunkId: stored.id,
      },
      made.facts,
      made.prepared,
    );
    return { chunk: stored, events };
  }

  /** The model's facts worth keeping, with the turns they came from. */
  private factsOf(summary: TurnsSummary, turns: ChunkTurn[]): ExtractedFact[] {
    const byIndex = new Map(turns.map((t) => [t.turnIndex, t]));
    const out: ExtractedFact[] = [];
    for (const fact of this.facts.keepExtracted(summary.facts)) {
      const sources = [...new Set(fact.sourceTurnIndexes)]
        .map((i) => byIndex.get(i))
        .filter((t): t is ChunkTurn => t !== undefined)
        .sort((a, b) => a.turnIndex - b.turnIndex);
      // A fact is what the member said: one the agent alone voiced is not theirs to keep.
      if (!sources.some((t) => t.role === MessageRole.USER)) continue;
      out.push({
        content: fact.content,
        category: fact.category as FactCategory,
        confidence: fact.confidence,
        rangeStart: sources[0].turnIndex,
        rangeEnd: sources[sources.length - 1].turnIndex,
        messageIds: sources.map((t) => t.id),
        // The member whose turn stated it: of its turns, the last a member said (a question
        // asked by one and answered by another is the answerer's fact).
        authorId: sources.filter((t) => t.role === MessageRole.USER).pop()!.userId,
        occurredAt: new Date(Math.max(...sources.map((t) => new Date(t.occurredAt).getTime()))),
      });
    }
    // In the order they were said, so a later correction supersedes an earlier statement.
    return out.sort(
      (a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || a.rangeEnd - b.rangeEnd,
    );
  }
}
