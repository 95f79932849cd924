import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingRepository } from '../embeddings/embedding.repository.js';
import { EmbeddedTexts, EmbeddingService } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import {
  Classified,
  FactFeatures,
  classifyFacts,
  factFeatures,
  normalizeFact,
  tidyFact,
} from './fact-relations.js';
import {
  asSeenBy,
  canSee,
  FactVisibilityState,
  historyEntryForOthers,
  viewKey,
} from './fact-visibility.js';
import { FactEntity, FactHistoryEntity, FactSourceEntity } from './fact.entity.js';
import {
  FactAction,
  FactCategory,
  FactChange,
  FactSourceKind,
  FactStatus,
  FactVisibility,
} from './fact.enums.js';
import { FACT_KIND, FactFilterSql, FactRepository, NewSource } from './fact.repository.js';
import { FactErrorCode, FactException } from './facts.exception.js';

const MAX_CONTENT = 500;
/** Nearest stored facts whose similarity the relation rules see, per new fact. */
const SIMILAR_LIMIT = 20;

/** A fact with the state of the fact that superseded it: all a viewer's projection needs. */
export interface FactSnapshot {
  fact: FactEntity;
  superseder: FactVisibilityState | null;
}

/** What factChanged publishes; each subscriber is shown its own view of it (fact-visibility). */
export interface FactEvent {
  legacyId: string;
  change: Exclude<FactChange, FactChange.REMOVED>;
  fact: FactEntity;
  superseder: FactVisibilityState | null;
  /** The fact before the change (null: it did not exist). */
  before: FactSnapshot | null;
  actorId: string | null;
}

/** A subscriber's view of one change. */
export interface FactChangedView {
  change: FactChange;
  factId: string;
  fact: FactEntity | null;
  actorId: string | null;
}

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
}

export interface ExtractionSource {
  legacyId: string;
  legacyName: string;
  authorId: string;
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

/**
 * Facts about legacies: dedupe and supersession as facts arrive (from summarization or by
 * hand), the family review operations and their history, and factChanged events.
 */
@Injectable()
export class FactsService {
  private readonly logger = new Logger('Facts');

  constructor(
    private readonly dataSource: DataSource,
    private readonly facts: FactRepository,
    private readonly legacies: LegaciesService,
    private readonly legacyRepo: LegacyRepository,
    private readonly embeddings: EmbeddingService,
    private readonly vectors: EmbeddingRepository,
    private readonly bus: EventBus,
    private readonly config: AppConfig,
  ) {}

  // ---- writing facts ----------------------------------------------------------------------

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
    if (facts.length === 0) return [];
    const events: FactEvent[] = [];
    await this.facts.lockAuthor(manager, source.legacyId, source.authorId);
    const pool = await this.pool(manager, source.legacyId, source.authorId, source.legacyName);
    for (const [i, fact] of facts.entries()) {
      await this.applyOne(manager, source, pool, prepared, events, {
        content: fact.content,
        category: fact.category,
        confidence: fact.confidence,
        visibility: FactVisibility.PRIVATE,
        source: {
          kind: FactSourceKind.CONVERSATION,
          conversationId: source.conversationId,
          chunkId: source.chunkId,
          rangeStart: fact.rangeStart,
          rangeEnd: fact.rangeEnd,
          messageIds: fact.messageIds,
          addedBy: source.authorId,
          occurredAt: fact.occurredAt,
        },
        validFrom: fact.occurredAt,
        vectorIndex: i,
        manual: false,
        actorId: null,
      });
    }
    return events;
  }

  /** addFact: a member writes a fact by hand. A restatement raises the existing fact's count. */
  async add(
    user: UserEntity,
    input: {
      legacyId: string;
      content: string;
      category: FactCategory;
      visibility?: FactVisibility | null;
    },
  ): Promise<FactEntity> {
    await this.legacies.requireMember(user.id, input.legacyId);
    const content = this.validContent(input.content);
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
    await this.publish(events);
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
      events.push(await this.event(m, FactChange.UPDATED, created, twin, incoming.actorId));
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
      events.push(await this.event(m, FactChange.CREATED, created, null, incoming.actorId));
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
      events.push(await this.event(m, FactChange.UPDATED, superseded, before, incoming.actorId));
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
    events.push(await this.event(m, FactChange.UPDATED, mentioned, fact, incoming.actorId));
    return mentioned;
  }

  private async storeVector(
    m: EntityManager,
    fact: FactEntity,
    prepared: PreparedVectors,
    index: number,
  ): Promise<void> {
    const embedded = prepared.embedded.map((e) => ({
      model: e.model,
      vectors: [e.vectors[index]],
    }));
    await this.embeddings.store(
      FACT_KIND,
      [{ id: fact.id, legacyId: fact.legacyId, userId: fact.authorId }],
      embedded,
      m,
    );
  }

  // ---- review -----------------------------------------------------------------------------

  /**
   * The fact as the user sees it (fact-visibility.ts), if they may; NOT_FOUND otherwise
   * (existence is not revealed).
   */
  async getVisible(user: UserEntity, id: string): Promise<FactEntity> {
    const [fact] = await this.facts.findForViewer([id], user.id);
    if (!fact) throw FactException.notFound();
    await this.legacies.requireMember(user.id, fact.legacyId).catch(() => {
      throw FactException.notFound();
    });
    return fact;
  }

  async list(
    user: UserEntity,
    legacyId: string,
    filter: (FactFilterSql & { search?: string | null }) | null | undefined,
    args: { first?: number; after?: string },
  ): Promise<Connection<FactEntity>> {
    await this.legacies.requireMember(user.id, legacyId);
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor ? decodeCursor(request.cursor, 'after', 2) : undefined;
    const text = filter?.search?.trim() ?? '';
    const search = text
      ? {
          text,
          vector: await this.embeddings.embedQuery(text),
          minSimilarity: this.config.env.FACT_SEARCH_MIN_SIMILARITY,
        }
      : null;
    const rows = await this.facts.page(
      legacyId,
      user.id,
      filter ?? {},
      request.limit + 1,
      after,
      search,
    );
    return toConnection(rows, request, (f) => encodeCursor([f.cursorKey, f.id]));
  }

  async update(
    user: UserEntity,
    input: { id: string; content?: string | null; category?: FactCategory | null },
  ): Promise<FactEntity> {
    const fact = await this.getVisible(user, input.id);
    this.requireAuthor(user, fact, 'Only its author can change what a fact says.');
    if (fact.status === FactStatus.DELETED) {
      throw new FactException(FactErrorCode.FACT_DELETED, 'Restore this fact before editing it.');
    }
    const content = input.content != null ? this.validContent(input.content) : fact.content;
    const category = input.category ?? fact.category;
    if (content === fact.content && category === fact.category) return fact;
    const normalized = normalizeFact(content);
    const prepared = content !== fact.content ? await this.prepare([content]) : null;
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      await this.facts.lockAuthor(m, fact.legacyId, fact.authorId);
      const current = await this.facts.lockById(m, fact.id);
      if (!current || current.status === FactStatus.DELETED) throw FactException.notFound();
      if (normalized !== current.normalized && current.status === FactStatus.ACTIVE) {
        const pool = await this.facts.comparable(m, fact.legacyId, fact.authorId);
        if (pool.some((f) => f.status === FactStatus.ACTIVE && f.normalized === normalized)) {
          throw new FactException(
            FactErrorCode.DUPLICATE_FACT,
            'You already have a fact that says this.',
            'content',
          );
        }
      }
      const changed = await this.facts.update(m, fact.id, { content, normalized, category });
      if (prepared) {
        // The old vector describes the old text: drop it; the sweeper fills any gap.
        await this.vectors.deleteItems(FACT_KIND, [fact.id], m);
        await this.storeVector(m, changed, prepared, 0);
      }
      await this.facts.addHistory(m, changed, FactAction.UPDATED, { actorId: user.id });
      events.push(await this.event(m, FactChange.UPDATED, changed, current, user.id));
      return changed;
    });
    await this.publish(events);
    return result;
  }

  /**
   * Its author shares or unshares a fact; an owner or admin can take a shared fact back to
   * private (moderation), never the other way.
   */
  async setVisibility(
    user: UserEntity,
    id: string,
    visibility: FactVisibility,
  ): Promise<FactEntity> {
    const fact = await this.getVisible(user, id);
    if (fact.authorId !== user.id) {
      if (visibility === FactVisibility.SHARED) {
        throw new FactException(FactErrorCode.NOT_FACT_AUTHOR, 'Only its author can share a fact.');
      }
      await this.requireAuthorOrManager(user, fact);
    }
    if (fact.visibility === visibility) return fact;
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      const current = await this.facts.lockById(m, id);
      if (!current) throw FactException.notFound();
      return this.changeVisibility(m, current, visibility, user.id, events);
    });
    await this.publish(events);
    return result;
  }

  private async changeVisibility(
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
    events.push(await this.event(m, FactChange.VISIBILITY_CHANGED, changed, current, actorId));
    events.push(...(await this.supersededEvents(m, changed, current, actorId)));
    return changed;
  }

  /**
   * A soft delete by its author, or by an owner or admin (moderation of a shared fact). The
   * author needs no membership: a member who left or was removed still owns what they wrote.
   * Deleted facts are purged after FACT_PURGE_AFTER.
   */
  async delete(user: UserEntity, id: string): Promise<FactEntity> {
    const own = await this.facts.findById(id);
    const fact = own?.authorId === user.id ? own : await this.getVisible(user, id);
    await this.requireAuthorOrManager(user, fact);
    if (fact.status === FactStatus.DELETED) return fact;
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      const current = await this.facts.lockById(m, id);
      if (!current) throw FactException.notFound();
      if (current.status === FactStatus.DELETED) return current;
      const deleted = await this.facts.softDelete(m, id, user.id);
      await this.facts.addHistory(m, deleted, FactAction.DELETED, { actorId: user.id });
      events.push(await this.event(m, FactChange.DELETED, deleted, current, user.id));
      events.push(...(await this.supersededEvents(m, deleted, current, user.id)));
      return deleted;
    });
    await this.publish(events);
    return result;
  }

  /**
   * Removes deleted facts whose FACT_PURGE_AFTER has passed, for good (the scheduled task).
   * Idempotent: a second run finds nothing. Returns how many went.
   */
  async purgeDeleted(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.config.env.FACT_PURGE_AFTER);
    let purged = 0;
    for (;;) {
      const ids = await this.facts.purgeable(before, 100);
      for (const id of ids) {
        if (await this.dataSource.transaction((m) => this.facts.purge(m, id, before))) purged++;
      }
      if (ids.length < 100) return purged;
    }
  }

  /** The user's own facts in legacies they are no longer a member of (to delete them). */
  async listLeftBehind(
    user: UserEntity,
    args: { first?: number; after?: string },
  ): Promise<Connection<FactEntity>> {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor ? decodeCursor(request.cursor, 'after', 2) : undefined;
    const memberOf = await this.legacyRepo.legacyIdsOf(user.id);
    const rows = await this.facts.pageLeftBehind(user.id, memberOf, request.limit + 1, after);
    return toConnection(rows, request, (f) => encodeCursor([f.cursorKey, f.id]));
  }

  /** Undoes a delete: its author, or the owner or admin who deleted it. */
  async restore(user: UserEntity, id: string): Promise<FactEntity> {
    const fact = await this.facts.findById(id);
    const deletedByMe =
      fact?.status === FactStatus.DELETED &&
      fact.deletedBy === user.id &&
      fact.visibility === FactVisibility.SHARED;
    if (!fact || !(canSee(fact, user.id) || deletedByMe)) throw FactException.notFound();
    await this.legacies.requireMember(user.id, fact.legacyId).catch(() => {
      throw FactException.notFound();
    });
    if (fact.status !== FactStatus.DELETED) return fact;
    if (fact.authorId !== user.id && !(await this.legacies.isManager(user.id, fact.legacyId))) {
      throw FactException.notFound();
    }
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      await this.facts.lockAuthor(m, fact.legacyId, fact.authorId);
      const current = await this.facts.lockById(m, id);
      if (!current) throw FactException.notFound();
      if (current.status !== FactStatus.DELETED) return current;
      const pool = await this.facts.comparable(m, fact.legacyId, fact.authorId);
      const activeTwin = pool.some(
        (f) => f.status === FactStatus.ACTIVE && f.normalized === current.normalized,
      );
      if (activeTwin && !current.supersededBy) {
        throw new FactException(
          FactErrorCode.DUPLICATE_FACT,
          'An active fact already says this; this one stays deleted.',
        );
      }
      const restored = await this.facts.restore(m, id);
      await this.facts.addHistory(m, restored, FactAction.RESTORED, { actorId: user.id });
      events.push(await this.event(m, FactChange.RESTORED, restored, current, user.id));
      events.push(...(await this.supersededEvents(m, restored, current, user.id)));
      return restored;
    });
    await this.publish(events);
    return result;
  }

  /**
   * A fact's changes, oldest first. Other members see those made while it was shared, without
   * the author's mentions or a supersession by a fact they cannot see (fact-visibility.ts).
   */
  async history(user: UserEntity, id: string): Promise<FactHistoryEntity[]> {
    const fact = await this.getVisible(user, id);
    const rows = await this.facts.history(id, user.id);
    const mine = fact.authorId === user.id;
    return rows.flatMap(({ relatedVisible, supersessionVisible, ...entry }) => {
      if (mine) return [entry];
      const seen = historyEntryForOthers(entry, relatedVisible, supersessionVisible);
      return seen ? [seen] : [];
    });
  }

  /** Facts by id that the viewer may see, as they see them (others are left out). */
  findVisibleByIds(viewerId: string, ids: readonly string[]): Promise<FactEntity[]> {
    return this.facts.findForViewer(ids, viewerId);
  }

  /** Sources of facts, for their authors. */
  sourcesOf(factIds: readonly string[]): Promise<FactSourceEntity[]> {
    return this.facts.sourcesOf(factIds);
  }

  requireMember(user: UserEntity, legacyId: string) {
    return this.legacies.requireMember(user.id, legacyId);
  }

  // ---- events -----------------------------------------------------------------------------

  private async stateOf(m: EntityManager, id: string | null): Promise<FactVisibilityState | null> {
    if (!id) return null;
    const fact = await this.facts.findById(id, m);
    return fact && { authorId: fact.authorId, visibility: fact.visibility, status: fact.status };
  }

  /** An event with what each viewer's projection needs: the superseders before and after. */
  private async event(
    m: EntityManager,
    change: FactEvent['change'],
    fact: FactEntity,
    before: FactEntity | null,
    actorId: string | null,
  ): Promise<FactEvent> {
    return {
      legacyId: fact.legacyId,
      change,
      fact,
      superseder: await this.stateOf(m, fact.supersededBy),
      before: before && { fact: before, superseder: await this.stateOf(m, before.supersededBy) },
      actorId,
    };
  }

  /**
   * When a fact's visibility or existence changes, so does what other members see of the facts
   * it superseded (fact-visibility.ts): an UPDATED event for each, from the fact before to now.
   */
  private async supersededEvents(
    m: EntityManager,
    superseder: FactEntity,
    before: FactEntity,
    actorId: string | null,
  ): Promise<FactEvent[]> {
    const older = await this.facts.supersededBy(m, superseder.id);
    const state = (f: FactEntity): FactVisibilityState => ({
      authorId: f.authorId,
      visibility: f.visibility,
      status: f.status,
    });
    return older.map((fact) => ({
      legacyId: fact.legacyId,
      change: FactChange.UPDATED,
      fact,
      superseder: state(superseder),
      before: { fact, superseder: state(before) },
      actorId,
    }));
  }

  /** Publishes events after their transaction committed; a failed publish never fails a write. */
  async publish(events: FactEvent[]): Promise<void> {
    for (const event of events) {
      try {
        await this.bus.publish(topics.legacyFacts(event.legacyId), event);
      } catch (err) {
        this.logger.warn({ msg: 'fact event not published', error: (err as Error).message });
      }
    }
  }

  /** Whether a subscriber gets this event: a member for whom something changed. */
  async deliverable(event: FactEvent, viewer: UserEntity | undefined): Promise<boolean> {
    if (!viewer || !this.viewOf(event, viewer.id)) return false;
    return (await this.legacyRepo.findMembership(event.legacyId, viewer.id)) !== null;
  }

  /**
   * The subscriber's view (fact-visibility.ts): the change as they see the fact now, REMOVED once
   * it is no longer theirs to see, or null when nothing they can see changed (a mention, or a
   * supersession by a fact they cannot see).
   */
  viewOf(event: FactEvent, viewerId: string): FactChangedView | null {
    const now = canSee(event.fact, viewerId)
      ? asSeenBy(reviveDates(event.fact), event.superseder, viewerId)
      : null;
    const then =
      event.before && canSee(event.before.fact, viewerId)
        ? asSeenBy(reviveDates(event.before.fact), event.before.superseder, viewerId)
        : null;
    if (!now) {
      return then
        ? { change: FactChange.REMOVED, factId: event.fact.id, fact: null, actorId: null }
        : null;
    }
    if (then && viewKey(then) === viewKey(now)) return null;
    return { change: event.change, factId: event.fact.id, fact: now, actorId: event.actorId };
  }

  // ---- rules ------------------------------------------------------------------------------

  private requireAuthor(user: UserEntity, fact: FactEntity, message: string): void {
    if (fact.authorId !== user.id) throw new FactException(FactErrorCode.NOT_FACT_AUTHOR, message);
  }

  private async requireAuthorOrManager(user: UserEntity, fact: FactEntity): Promise<void> {
    if (fact.authorId === user.id) return;
    if (!(await this.legacies.isManager(user.id, fact.legacyId))) {
      throw new FactException(
        FactErrorCode.NOT_FACT_AUTHOR,
        "Only its author, or an owner or admin of the legacy, can do this to a member's fact.",
      );
    }
  }

  private validContent(raw: string): string {
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
}

/** Events that crossed the PostgreSQL event bus carry dates as strings. */
function reviveDates(fact: FactEntity): FactEntity {
  const date = (v: Date | string | null) => (v == null ? null : new Date(v));
  return {
    ...fact,
    validFrom: date(fact.validFrom)!,
    validTo: date(fact.validTo),
    deletedAt: date(fact.deletedAt),
    createdAt: date(fact.createdAt)!,
    updatedAt: date(fact.updatedAt)!,
  };
}
