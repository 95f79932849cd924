import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { FactAccessService } from './fact-access.service.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';
import { FactReconcilerService, Incoming } from './fact-reconciler.service.js';
import { normalizeFact, tidyFact } from './fact-relations.js';
import { FactSharingService } from './fact-sharing.service.js';
import { FactVectorsService, PreparedVectors, pickPrepared } from './fact-vectors.service.js';
import { FactEntity } from './fact.entity.js';
import { FactCategory, FactSourceKind, FactVisibility } from './fact.enums.js';
import { FactErrorCode, FactException } from './facts.exception.js';
import { MAX_FACT_CONTENT } from './dto/fact.inputs.js';

/** A fact the summarizer found in a range of turns. */
export interface ExtractedFact {
  content: string;
  category: FactCategory;
  confidence: number;
  /** The turns it came from. */
  rangeStart: number;
  rangeEnd: number;
  messageIds: string[];
  /** When it was said (the latest of its turns). */
  occurredAt: Date;
  /** The member who said it: in a together conversation, each fact is its speaker's. */
  authorId: string;
}

/** A fact read in a passage of a story. */
export interface StoryFact {
  content: string;
  category: FactCategory;
  confidence: number;
  storyChunkId: string;
  page: number;
  /** When what the story tells happened, else when it was added. */
  occurredAt: Date;
}

export interface StorySource {
  legacyId: string;
  legacyName: string;
  authorId: string;
  storyId: string;
  /** PRIVATE unless the author chose to share them like the story. */
  visibility: FactVisibility;
}

export interface ExtractionSource {
  legacyId: string;
  legacyName: string;
  conversationId: string;
  chunkId: string;
}

/** A fact a member writes by hand (addFact). */
export interface NewFactInput {
  legacyId: string;
  content: string;
  category: FactCategory;
  visibility?: FactVisibility | null;
}

/** A fact's text as stored, or INVALID_FACT. */
export function validFactContent(raw: string): string {
  const content = tidyFact(raw ?? '');
  if (content.length === 0 || normalizeFact(content).length === 0) {
    throw new FactException(FactErrorCode.INVALID_FACT, 'A fact cannot be empty.', 'content');
  }
  if (content.length > MAX_FACT_CONTENT) {
    throw new FactException(
      FactErrorCode.INVALID_FACT,
      `A fact has at most ${MAX_FACT_CONTENT} characters.`,
      'content',
    );
  }
  return content;
}

/**
 * Writing facts as they arrive: from summarization, from stories, or by hand. Each is applied
 * by FactReconcilerService under its member's lock; the events go to FactEventsService to
 * publish once the caller's transaction has committed.
 */
@Injectable()
export class FactWriterService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reconciler: FactReconcilerService,
    private readonly vectors: FactVectorsService,
    private readonly sharing: FactSharingService,
    private readonly access: FactAccessService,
    private readonly legacyRepo: LegacyRepository,
    private readonly events: FactEventsService,
    private readonly config: AppConfig,
  ) {}

  /** Embeds fact texts for storage and comparison. Call outside any transaction. */
  prepare(texts: string[]): Promise<PreparedVectors> {
    return this.vectors.prepare(texts);
  }

  /** Extracted facts worth storing: confident enough, with some words, tidied as a sentence. */
  keepExtracted<T extends { content: string; confidence: number }>(facts: T[]): T[] {
    return facts
      .filter((f) => f.confidence >= this.config.env.FACT_MIN_CONFIDENCE)
      .map((f) => ({ ...f, content: tidyFact(f.content).slice(0, MAX_FACT_CONTENT) }))
      .filter((f) => normalizeFact(f.content).length > 0);
  }

  /**
   * Stores the facts of a summarized range inside the summarizer's transaction: each is a new
   * fact, a mention of one the member already has, or a newer fact that supersedes one. Returns
   * the events to publish once the transaction has committed.
   */
  async applyExtracted(
    manager: EntityManager,
    source: ExtractionSource,
    facts: ExtractedFact[],
    prepared: PreparedVectors,
  ): Promise<FactEvent[]> {
    const events: FactEvent[] = [];
    // Each speaker's facts are theirs: applied (and deduplicated) among that member's own.
    const byAuthor = new Map<string, number[]>();
    facts.forEach((f, i) => byAuthor.set(f.authorId, [...(byAuthor.get(f.authorId) ?? []), i]));
    for (const [authorId, indexes] of [...byAuthor].sort(([a], [b]) => (a < b ? -1 : 1))) {
      events.push(
        ...(await this.applyFound(
          manager,
          { ...source, authorId },
          pickPrepared(prepared, indexes),
          indexes.map((i) => facts[i]),
          (fact) => ({
            visibility: FactVisibility.PRIVATE,
            source: {
              kind: FactSourceKind.CONVERSATION,
              conversationId: source.conversationId,
              chunkId: source.chunkId,
              rangeStart: fact.rangeStart,
              rangeEnd: fact.rangeEnd,
              messageIds: fact.messageIds,
              addedBy: authorId,
              occurredAt: fact.occurredAt,
            },
          }),
        )),
      );
    }
    return events;
  }

  /**
   * Facts read in a story's passages, applied like those of a conversation (restatements
   * mention, corrections supersede), each mention pointing at the passage and its page.
   */
  applyFromStory(
    manager: EntityManager,
    source: StorySource,
    facts: StoryFact[],
    prepared: PreparedVectors,
  ): Promise<FactEvent[]> {
    return this.applyFound(manager, source, prepared, facts, (fact) => ({
      visibility: source.visibility,
      source: {
        kind: FactSourceKind.STORY,
        conversationId: null,
        chunkId: null,
        rangeStart: null,
        rangeEnd: null,
        messageIds: [],
        addedBy: source.authorId,
        occurredAt: fact.occurredAt,
        storyId: source.storyId,
        storyChunkId: fact.storyChunkId,
        page: fact.page,
      },
    }));
  }

  /** Found facts (not written by hand), in order, under the author's lock. */
  private async applyFound<
    F extends { content: string; category: FactCategory; confidence: number; occurredAt: Date },
  >(
    manager: EntityManager,
    source: { legacyId: string; legacyName: string; authorId: string },
    prepared: PreparedVectors,
    facts: F[],
    origin: (fact: F) => Pick<Incoming, 'visibility' | 'source'>,
  ): Promise<FactEvent[]> {
    if (facts.length === 0) return [];
    const events: FactEvent[] = [];
    const pool = await this.reconciler.open(manager, source);
    for (const [i, fact] of facts.entries()) {
      await this.reconciler.apply(manager, pool, prepared, events, {
        content: fact.content,
        category: fact.category,
        confidence: fact.confidence,
        ...origin(fact),
        validFrom: fact.occurredAt,
        vectorIndex: i,
        manual: false,
        actorId: null,
      });
    }
    return events;
  }

  /** addFact: a member writes a fact by hand. A restatement raises the existing fact's count. */
  async add(user: UserEntity, input: NewFactInput): Promise<FactEntity> {
    await this.access.requireMember(user, input.legacyId);
    const content = validFactContent(input.content);
    const legacy = await this.legacyRepo.findById(input.legacyId);
    if (!legacy) throw FactException.notFound();
    const prepared = await this.vectors.prepare([content]);
    const events: FactEvent[] = [];
    const fact = await this.dataSource.transaction(async (m) => {
      const pool = await this.reconciler.open(m, {
        legacyId: input.legacyId,
        legacyName: legacy.name,
        authorId: user.id,
      });
      const now = new Date();
      // Never null: only facts from conversations are held back by a deleted twin.
      const applied = (await this.reconciler.apply(m, pool, prepared, events, {
        content,
        category: input.category,
        confidence: 1,
        visibility: input.visibility ?? FactVisibility.PRIVATE,
        source: {
          kind: FactSourceKind.MANUAL,
          conversationId: null,
          chunkId: null,
          rangeStart: null,
          rangeEnd: null,
          messageIds: [],
          addedBy: user.id,
          occurredAt: now,
        },
        validFrom: now,
        vectorIndex: 0,
        manual: true,
        actorId: user.id,
      }))!;
      // Asking to share what you had already written privately shares it.
      if (
        !applied.created &&
        input.visibility === FactVisibility.SHARED &&
        applied.fact.visibility === FactVisibility.PRIVATE
      ) {
        return this.sharing.change(m, applied.fact, FactVisibility.SHARED, user.id, events);
      }
      return applied.fact;
    });
    await this.events.publish(events);
    return fact;
  }

  /**
   * Facts brought in by a legacy archive's import, inside its transaction: written as by hand
   * by the importer (a restatement of one they have raises its count, as addFact does), with
   * the visibility and dates they had in the archive. Returns the events to publish after commit.
   */
  async applyArchived(
    manager: EntityManager,
    source: { legacyId: string; legacyName: string; authorId: string },
    facts: {
      content: string;
      category: FactCategory;
      confidence: number;
      visibility: FactVisibility;
      validFrom: Date;
      createdAt: Date;
    }[],
    prepared: PreparedVectors,
  ): Promise<FactEvent[]> {
    const events: FactEvent[] = [];
    if (facts.length === 0) return events;
    const pool = await this.reconciler.open(manager, source);
    for (const [i, fact] of facts.entries()) {
      const applied = await this.reconciler.apply(manager, pool, prepared, events, {
        content: validFactContent(fact.content),
        category: fact.category,
        confidence: fact.confidence,
        visibility: fact.visibility,
        source: {
          kind: FactSourceKind.MANUAL,
          conversationId: null,
          chunkId: null,
          rangeStart: null,
          rangeEnd: null,
          messageIds: [],
          addedBy: source.authorId,
          occurredAt: fact.createdAt,
        },
        validFrom: fact.validFrom,
        vectorIndex: i,
        manual: true,
        actorId: source.authorId,
      });
      if (
        applied &&
        !applied.created &&
        fact.visibility === FactVisibility.SHARED &&
        applied.fact.visibility === FactVisibility.PRIVATE
      ) {
        await this.sharing.change(
          manager,
          applied.fact,
          FactVisibility.SHARED,
          source.authorId,
          events,
        );
      }
    }
    return events;
  }

  /** Publishes events after their transaction committed (FactEventsService.publish). */
  publish(events: FactEvent[]): Promise<void> {
    return this.events.publish(events);
  }
}
