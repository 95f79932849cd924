import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';
import { FactHistoryRepository } from './fact-history.repository.js';
import {
  Classified,
  FactFeatures,
  classifyFacts,
  factFeatures,
  normalizeFact,
} from './fact-relations.js';
import { FactSourceRepository, NewSource } from './fact-source.repository.js';
import { FactVectorsService, PreparedVectors } from './fact-vectors.service.js';
import { seenByFamily } from './fact-visibility.js';
import { FactEntity } from './fact.entity.js';
import { FactAction, FactCategory, FactChange, FactStatus, FactVisibility } from './fact.enums.js';
import { FactRepository } from './fact.repository.js';

/** The history entry of a superseded fact that is in effect again. */
export const REVIVED_DETAIL = 'In effect again after a newer fact had superseded it.';

/** Nearest stored facts whose similarity the relation rules see, per new fact. */
const SIMILAR_LIMIT = 20;

/** Words every fact about the legacy shares: they say nothing about what a fact is about. */
const PRONOUNS_AND_KIN =
  'he she him her his hers they them their late my our dad father mom mother mum grandpa grandfather grandma grandmother granny nana papa mama husband wife'.split(
    ' ',
  );

function ignoreWordsFor(legacyName: string): Set<string> {
  const words = normalizeFact(legacyName).split(' ').filter(Boolean);
  return new Set([...PRONOUNS_AND_KIN, ...words, ...words.map((w) => `${w}s`)]);
}

interface PoolEntry {
  fact: FactEntity;
  features: FactFeatures;
}

/** One member's facts about one legacy that a new one is compared with, kept current as facts are applied. */
export interface Pool {
  legacyId: string;
  authorId: string;
  entries: PoolEntry[];
  /** Words that name the legacy. */
  ignore: Set<string>;
}

/** A fact arriving for the pool's member, from a conversation, a story or their own hand. */
export interface Incoming {
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

export interface Applied {
  fact: FactEntity;
  created: boolean;
}

/**
 * Dedupe and supersession of arriving facts against the member's own (fact-relations.ts): each
 * is a new fact, a mention of one they already have, or a newer fact that supersedes some.
 * Inside the caller's transaction; the events are for it to publish once that has committed.
 */
@Injectable()
export class FactReconcilerService {
  constructor(
    private readonly facts: FactRepository,
    private readonly sources: FactSourceRepository,
    private readonly history: FactHistoryRepository,
    private readonly vectors: FactVectorsService,
    private readonly events: FactEventsService,
    private readonly config: AppConfig,
  ) {}

  /**
   * Takes the member's write lock for the legacy, then reads their facts: the pool stays true
   * only while no other write of theirs can interleave.
   */
  async open(
    manager: EntityManager,
    source: { legacyId: string; legacyName: string; authorId: string },
  ): Promise<Pool> {
    await this.facts.lockAuthor(manager, source.legacyId, source.authorId);
    const ignore = ignoreWordsFor(source.legacyName);
    const rows = await this.facts.comparable(manager, source.legacyId, source.authorId);
    return {
      legacyId: source.legacyId,
      authorId: source.authorId,
      entries: rows.map((fact) => ({ fact, features: factFeatures(fact.content, ignore) })),
      ignore,
    };
  }

  /**
   * Applies one arriving fact. Null when it repeats a fact its member deleted and did not
   * write it by hand.
   */
  async apply(
    m: EntityManager,
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
            pool.legacyId,
            pool.authorId,
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
      pool.legacyId,
      pool.authorId,
      features.normalized,
    );
    if (twin && later) {
      return { fact: await this.mention(m, twin, incoming, events), created: false };
    }
    let created: FactEntity;
    if (twin) {
      // Superseded by a fact the family cannot see, it never stopped being in effect for them:
      // its coming back is not theirs to see either.
      const superseder = twin.supersededBy ? await this.facts.findById(twin.supersededBy, m) : null;
      const familySawIt = superseder !== null && seenByFamily(superseder);
      await this.facts.reactivate(m, twin.id);
      created =
        (await this.addMention(m, twin.id, incoming)) ?? (await this.facts.findById(twin.id, m))!;
      await this.history.add(m, created, FactAction.RESTORED, {
        actorId: incoming.actorId,
        conversationId: incoming.source.conversationId,
        // The family may see it come back, never that it was said (mentions are the author's).
        detail: REVIVED_DETAIL,
        privateEntry: !familySawIt,
      });
      events.push(await this.events.event(m, FactChange.UPDATED, created, twin, incoming.actorId));
    } else {
      created = await this.facts.insert(m, {
        legacyId: pool.legacyId,
        authorId: pool.authorId,
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
      await this.sources.add(m, { ...incoming.source, factId: created.id });
      // Restating a fact with more detail takes over its mentions (it supersedes it below).
      if (!later) {
        for (const { entry, why } of conflicts) {
          if (why.restates) created = await this.carryMentions(m, entry.fact.id, created.id);
        }
      }
      await this.vectors.store(m, created, prepared, incoming.vectorIndex);
      await this.history.add(m, created, FactAction.CREATED, {
        actorId: incoming.actorId,
        conversationId: incoming.source.conversationId,
      });
      events.push(await this.events.event(m, FactChange.CREATED, created, null, incoming.actorId));
    }
    if (later) {
      await this.history.add(m, created, FactAction.SUPERSEDED, {
        relatedFactId: later.entry.fact.id,
        detail: `${later.why.relation.toLowerCase()}: ${later.why.detail} (said earlier than it)`,
      });
      return { fact: created, created: true };
    }
    pool.entries.push({ fact: created, features });
    for (const { entry, why } of conflicts) {
      const before = entry.fact;
      const superseded = await this.facts.supersede(m, before.id, created.id, incoming.validFrom);
      await this.history.add(m, superseded, FactAction.SUPERSEDED, {
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

  /**
   * The mention counts once per range (or story passage): the fact as it now stands, or null
   * when that range had already counted.
   */
  private async addMention(
    m: EntityManager,
    factId: string,
    incoming: Incoming,
  ): Promise<FactEntity | null> {
    const added = await this.sources.add(m, { ...incoming.source, factId });
    return added ? this.facts.mention(m, factId, incoming.confidence) : null;
  }

  /** A repeat of `fact`: one more mention, with its history entry and event. */
  private async mention(
    m: EntityManager,
    fact: FactEntity,
    incoming: Incoming,
    events: FactEvent[],
  ): Promise<FactEntity> {
    const mentioned = await this.addMention(m, fact.id, incoming);
    if (!mentioned) return fact;
    await this.history.add(m, mentioned, FactAction.MENTIONED, {
      actorId: incoming.actorId,
      conversationId: incoming.source.conversationId,
    });
    events.push(await this.events.event(m, FactChange.UPDATED, mentioned, fact, incoming.actorId));
    return mentioned;
  }

  /**
   * The older fact's mentions (its sources) go over to the fact that restates it with more
   * detail, so the count stays true and deleting a conversation still takes its mentions away.
   */
  private async carryMentions(m: EntityManager, fromId: string, toId: string): Promise<FactEntity> {
    await this.sources.carryOver(m, fromId, toId);
    return this.facts.recountMentions(m, fromId, toId);
  }
}
