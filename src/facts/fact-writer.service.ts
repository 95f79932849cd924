import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { EmbeddedTexts, EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import {
  Classified,
  FactFeatures,
  classifyFacts,
  factFeatures,
  normalizeFact,
  tidyFact,
} from './fact-relations.js';
import { FactEntity } from './fact.entity.js';
import {
  FactAction,
  FactCategory,
  FactChange,
  FactSourceKind,
  FactStatus,
  FactVisibility,
} from './fact.enums.js';
import { FACT_KIND, FactRepository, NewSource } from './fact.repository.js';
import { FactErrorCode, FactException } from './facts.exception.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';

const MAX_CONTENT = 500;
/** Nearest stored facts whose similarity the relation rules see, per new fact. */
const SIMILAR_LIMIT = 20;

/** Vectors of new facts' texts, made outside the transaction. */
export interface PreparedVectors {
  /** For storage, one entry per model (see EmbeddingService.embedForStorage). */
  embedded: EmbeddedTexts[];
  /** The vectors in the model search uses, for similarity; null when it is unavailable. */
  comparison: { model: string; dimensions: number; vectors: number[][] } | null;
}

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

interface PoolEntry {
  fact: FactEntity;
  features: FactFeatures;
}

/** The member's facts a new one is compared with, kept current as facts are applied. */
interface Pool {
  entries: PoolEntry[];
  /** Words that name the legacy. */
  ignore: Set<string>;
}

interface Incoming {
  content: string;
  category: FactCategory;
  confidence: number;
  visibility: FactVisibility;
  source: Omit<NewSource, 'factId'>;
  validFrom: Date;
  /** The vector index in the prepared vectors. */
  vectorIndex: number;
  /** Facts by hand are stored even when they repeat a deleted fact. */
  manual: boolean;
  actorId: string | null;
}

interface Applied {
  fact: FactEntity;
  created: boolean;
}

/** Words every fact about the legacy shares: they say nothing about what a fact is about. */
const PRONOUNS_AND_KIN =
  'he she him her his hers they them their late my our dad father mom mother mum grandpa grandfather grandma grandmother granny nana papa mama husband wife'.split(
    ' ',
  );

function ignoreWordsFor(legacyName: string): Set<string> {
  const words = normalizeFact(legacyName).split(' ').filter(Boolean);
  return new Set([...PRONOUNS_AND_KIN, ...words, ...words.map((w) => `${w}s`)]);
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
  if (content.length > MAX_CONTENT) {
    throw new FactException(
      FactErrorCode.INVALID_FACT,
      `A fact has at most ${MAX_CONTENT} characters.`,
      'content',
    );
  }
  return content;
}

/**
 * Writing facts: dedupe and supersession as facts arrive (from summarization or by hand), the
 * mentions that repeat one, and their vectors. Returns the events for FactEventsService to
 * publish once the caller's transaction has committed.
 */
@Injectable()
export class FactWriterService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly facts: FactRepository,
    private readonly legacies: LegaciesService,
    private readonly legacyRepo: LegacyRepository,
    private readonly embeddings: EmbeddingService,
    private readonly events: FactEventsService,
    private readonly config: AppConfig,
  ) {}

  /** Embeds fact texts for storage and comparison. Call outside any transaction. */
  async prepare(texts: string[]): Promise<PreparedVectors> {
    if (texts.length === 0) return { embedded: [], comparison: null };
    const embedded = await this.embeddings.embedForStorage(texts);
    const search = await this.embeddings.searchModel();
    const inSearchModel = embedded.find((e) => e.model === search.model);
    return {
      embedded,
      comparison: inSearchModel ? { ...search, vectors: inSearchModel.vectors } : null,
    };
  }

  /** Extracted facts worth storing: confident enough, with some words, tidied as a sentence. */
  keepExtracted<T extends { content: string; confidence: number }>(facts: T[]): T[] {
    return facts
      .filter((f) => f.confidence >= this.config.env.FACT_MIN_CONFIDENCE)
      .map((f) => ({ ...f, content: tidyFact(f.content).slice(0, MAX_CONTENT) }))
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
    await this.facts.lockAuthor(manager, source.legacyId, source.authorId);
    const pool = await this.pool(manager, source.legacyId, source.authorId, source.legacyName);
    for (const [i, fact] of facts.entries()) {
      await this.applyOne(manager, source, pool, prepared, events, {
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
    await this.legacies.requireMember(user.id, input.legacyId);
    const content = validFactContent(input.content);
    const legacy = await this.legacyRepo.findById(input.legacyId);
    if (!legacy) throw FactException.notFound();
    const prepared = await this.prepare([content]);
    const events: FactEvent[] = [];
    const source = {
      legacyId: input.legacyId,
      legacyName: legacy.name,
      authorId: user.id,
    };
    const fact = await this.dataSource.transaction(async (m) => {
      await this.facts.lockAuthor(m, input.legacyId, user.id);
      const pool = await this.pool(m, input.legacyId, user.id, legacy.name);
      const now = new Date();
      // Never null: only facts from conversations are held back by a deleted twin.
      const applied = (await this.applyOne(m, source, pool, prepared, events, {
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
        return this.changeVisibility(m, applied.fact, FactVisibility.SHARED, user.id, events);
      }
      return applied.fact;
    });
    await this.events.publish(events);
    return fact;
  }

  private async pool(
    manager: EntityManager,
    legacyId: string,
    authorId: string,
    legacyName: string,
  ): Promise<Pool> {
    const ignore = ignoreWordsFor(legacyName);
    const rows = await this.facts.comparable(manager, legacyId, authorId);
    return {
      entries: rows.map((fact) => ({ fact, features: factFeatures(fact.content, ignore) })),
      ignore,
    };
  }

  private async applyOne(
    m: EntityManager,
    source: { legacyId: string; authorId: string },
    pool: Pool,
    prepared: PreparedVectors,
    events: FactEvent[],
    incoming: Incoming,
  ): Promise<Applied | null> {
    const features = factFeatures(incoming.content, pool.ignore);
    const vector = prepared.comparison?.vectors[incoming.vectorIndex] ?? null;
    const similar =
      vector && prepared.comparison
        ? await this.facts.similarities(
            m,
            source.legacyId,
            source.authorId,
            { ...prepared.comparison, vector },
            SIMILAR_LIMIT,
          )
        : new Map<string, number>();
    const thresholds = {
      duplicate: this.config.env.FACT_DUPLICATE_THRESHOLD,
      related: this.config.env.FACT_RELATED_THRESHOLD,
    };

    let duplicate: { entry: PoolEntry; exact: boolean; similarity: number } | null = null;
    let suppressed = false;
    const conflicts: { entry: PoolEntry; why: Classified }[] = [];
    for (const entry of pool.entries) {
      const similarity = similar.get(entry.fact.id) ?? null;
      const why = classifyFacts(features, entry.features, similarity, thresholds);
      if (!why) continue;
      if (entry.fact.status === FactStatus.DELETED) {
        // A member who deleted a fact does not want it back from the next summary.
        if (why.relation === 'DUPLICATE') suppressed = true;
        continue;
      }
      if (why.relation === 'DUPLICATE') {
        const exact = entry.features.normalized === features.normalized;
        const score = similarity ?? 0;
        if (
          !duplicate ||
          (exact && !duplicate.exact) ||
          (exact === duplicate.exact && score > duplicate.similarity)
        ) {
          duplicate = { entry, exact, similarity: score };
        }
      } else {
        conflicts.push({ entry, why });
      }
    }

    if (duplicate) {
      const fact = await this.mention(m, duplicate.entry.fact, incoming, events);
      duplicate.entry.fact = fact;
      return { fact, created: false };
    }
    if (suppressed && !incoming.manual) return null;

    // The later statement wins; one said earlier (an older import) goes straight to history.
    const later = conflicts
      .filter((c) => c.entry.fact.validFrom.getTime() > incoming.validFrom.getTime())
      .sort((a, b) => b.entry.fact.validFrom.getTime() - a.entry.fact.validFrom.getTime())[0];
    // Said again after a newer fact had superseded it: that fact gets the mention (and comes
    // back, unless what superseded it was said later still) rather than a twin.
    const twin = await this.facts.supersededTwin(
      m,
      source.legacyId,
      source.authorId,
      features.normalized,
    );
    if (twin && later) {
      return { fact: await this.mention(m, twin, incoming, events), created: false };
    }
    let created: FactEntity;
    if (twin) {
      await this.facts.reactivate(m, twin.id);
      created = await this.mentionOrKeep(m, twin.id, incoming);
      await this.facts.addHistory(m, created, FactAction.RESTORED, {
        actorId: incoming.actorId,
        conversationId: incoming.source.conversationId,
        detail: 'Said again after a newer fact had superseded it.',
      });
      events.push(await this.events.event(m, FactChange.UPDATED, created, twin, incoming.actorId));
    } else {
      created = await this.facts.insert(m, {
        legacyId: source.legacyId,
        authorId: source.authorId,
        category: incoming.category,
        content: incoming.content,
        normalized: features.normalized,
        visibility: incoming.visibility,
        status: later ? FactStatus.SUPERSEDED : FactStatus.ACTIVE,
        confidence: incoming.confidence,
        sourceConversationId: incoming.source.conversationId,
        sourceRangeStart: incoming.source.rangeStart,
        sourceRangeEnd: incoming.source.rangeEnd,
        sourceMessageIds: incoming.source.messageIds,
        validFrom: incoming.validFrom,
        validTo: later ? later.entry.fact.validFrom : null,
        supersededBy: later ? later.entry.fact.id : null,
      });
      await this.facts.addSource(m, { ...incoming.source, factId: created.id });
      // Restating a fact with more detail takes over its mentions (it supersedes it below).
      if (!later) {
        for (const { entry, why } of conflicts) {
          if (why.restates) created = await this.facts.carryMentions(m, entry.fact.id, created.id);
        }
      }
      await this.storeVector(m, created, prepared, incoming.vectorIndex);
      await this.facts.addHistory(m, created, FactAction.CREATED, {
        actorId: incoming.actorId,
        conversationId: incoming.source.conversationId,
      });
      events.push(await this.events.event(m, FactChange.CREATED, created, null, incoming.actorId));
    }
    if (later) {
      await this.facts.addHistory(m, created, FactAction.SUPERSEDED, {
        relatedFactId: later.entry.fact.id,
        detail: `${later.why.relation.toLowerCase()}: ${later.why.detail} (said earlier than it)`,
      });
      return { fact: created, created: true };
    }
    pool.entries.push({ fact: created, features });
    for (const { entry, why } of conflicts) {
      const before = entry.fact;
      const superseded = await this.facts.supersede(m, before.id, created.id, incoming.validFrom);
      await this.facts.addHistory(m, superseded, FactAction.SUPERSEDED, {
        actorId: incoming.actorId,
        relatedFactId: created.id,
        conversationId: incoming.source.conversationId,
        detail: `${why.relation.toLowerCase()}: ${why.detail}`,
      });
      events.push(
        await this.events.event(m, FactChange.UPDATED, superseded, before, incoming.actorId),
      );
      pool.entries.splice(pool.entries.indexOf(entry), 1);
    }
    return { fact: created, created: !twin };
  }

  /** Adds the mention (once per range) and returns the fact as it now stands. */
  private async mentionOrKeep(m: EntityManager, id: string, incoming: Incoming) {
    const added = await this.facts.addSource(m, { ...incoming.source, factId: id });
    if (added) return this.facts.mention(m, id, incoming.confidence);
    return (await this.facts.findById(id, m))!;
  }

  private async mention(
    m: EntityManager,
    fact: FactEntity,
    incoming: Incoming,
    events: FactEvent[],
  ): Promise<FactEntity> {
    const added = await this.facts.addSource(m, { ...incoming.source, factId: fact.id });
    if (!added) return fact;
    const mentioned = await this.facts.mention(m, fact.id, incoming.confidence);
    await this.facts.addHistory(m, mentioned, FactAction.MENTIONED, {
      actorId: incoming.actorId,
      conversationId: incoming.source.conversationId,
    });
    events.push(await this.events.event(m, FactChange.UPDATED, mentioned, fact, incoming.actorId));
    return mentioned;
  }

  /** Stores the prepared vector of one fact, in the caller's transaction. */
  async storeVector(
    m: EntityManager,
    fact: FactEntity,
    prepared: PreparedVectors,
    index: number,
  ): Promise<void> {
    const embedded = sliceEmbedded(prepared.embedded, index);
    await this.embeddings.store(
      FACT_KIND,
      [{ id: fact.id, legacyId: fact.legacyId, userId: fact.authorId }],
      embedded,
      m,
    );
  }

  /** Shares or unshares inside the caller's transaction, with the events it causes. */
  async changeVisibility(
    m: EntityManager,
    current: FactEntity,
    visibility: FactVisibility,
    actorId: string,
    events: FactEvent[],
  ): Promise<FactEntity> {
    if (current.visibility === visibility) return current;
    const changed = await this.facts.setVisibility(m, current.id, visibility);
    const moderated = actorId !== current.authorId;
    await this.facts.addHistory(m, changed, FactAction.VISIBILITY_CHANGED, {
      actorId,
      detail: moderated ? 'Taken back to private by an owner or admin of the legacy.' : null,
    });
    events.push(
      await this.events.event(m, FactChange.VISIBILITY_CHANGED, changed, current, actorId),
    );
    events.push(...(await this.events.supersededEvents(m, changed, current, actorId)));
    return changed;
  }

  /** Publishes events after their transaction committed (FactEventsService.publish). */
  publish(events: FactEvent[]): Promise<void> {
    return this.events.publish(events);
  }
}

/** The vectors of some of the prepared texts, in the order given. */
function pickPrepared(prepared: PreparedVectors, indexes: number[]): PreparedVectors {
  return {
    embedded: prepared.embedded.map((e) => ({ ...e, vectors: indexes.map((i) => e.vectors[i]) })),
    comparison: prepared.comparison && {
      ...prepared.comparison,
      vectors: indexes.map((i) => prepared.comparison!.vectors[i]),
    },
  };
}
