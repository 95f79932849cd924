import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { UserEntity } from '../identity/user.entity.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import {
  asSeenBy,
  canSee,
  FactVisibilityState,
  viewKey,
  visibilityState,
} from './fact-visibility.js';
import { FactEntity } from './fact.entity.js';
import { FactChange } from './fact.enums.js';
import { FactRepository } from './fact.repository.js';

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
  /** Removed for good with the story or conversation it came from: no one sees it any more. */
  gone?: boolean;
}

/** A subscriber's view of one change. */
export interface FactChangedView {
  change: FactChange;
  factId: string;
  fact: FactEntity | null;
  actorId: string | null;
}

/**
 * factChanged: the events a change to a fact causes, published after their transaction
 * commits, and what each subscriber is shown of them (fact-visibility.ts).
 */
@Injectable()
export class FactEventsService {
  constructor(
    private readonly facts: FactRepository,
    private readonly legacyRepo: LegacyRepository,
    private readonly bus: EventBus,
  ) {}

  private async stateOf(m: EntityManager, id: string | null): Promise<FactVisibilityState | null> {
    if (!id) return null;
    const fact = await this.facts.findById(id, m);
    return fact && visibilityState(fact);
  }

  /** An event with what each viewer's projection needs: the superseders before and after. */
  async event(
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
   * The event of a change to a fact's visibility or existence (share, unshare, delete, restore),
   * with those of the facts it superseded, since what other members see of them changes too.
   */
  async withSuperseded(
    m: EntityManager,
    change: FactEvent['change'],
    fact: FactEntity,
    before: FactEntity,
    actorId: string | null,
  ): Promise<FactEvent[]> {
    return [
      await this.event(m, change, fact, before, actorId),
      ...(await this.supersededEvents(m, fact, before, actorId)),
    ];
  }

  /**
   * What other members see of the facts `superseder` superseded follows whether they can see it
   * (fact-visibility.ts): an UPDATED event for each, from the fact before to now.
   */
  private async supersededEvents(
    m: EntityManager,
    superseder: FactEntity,
    before: FactEntity,
    actorId: string | null,
  ): Promise<FactEvent[]> {
    const older = await this.facts.supersededBy(m, superseder.id);
    return older.map((fact) => ({
      legacyId: fact.legacyId,
      change: FactChange.UPDATED,
      fact,
      superseder: visibilityState(superseder),
      before: { fact, superseder: visibilityState(before) },
      actorId,
    }));
  }

  /**
   * Before a story or a conversation is deleted (or its text replaced), in the same transaction:
   * what the facts it mentions, and those they superseded, look like. The returned function,
   * called once the deletion ran, gives the events it caused: a fact that had no other source
   * is gone (REMOVED for whoever saw it), one that lost mentions or got back what it superseded
   * is UPDATED (fact-visibility.ts shows each subscriber what changed for them).
   */
  async watchSource(
    m: EntityManager,
    source: { storyId: string } | { conversationId: string },
    actorId: string | null,
  ): Promise<() => Promise<FactEvent[]>> {
    const before: FactSnapshot[] = [];
    for (const fact of await this.facts.touchedBySource(m, source)) {
      before.push({ fact, superseder: await this.stateOf(m, fact.supersededBy) });
    }
    return async () => {
      const events: FactEvent[] = [];
      for (const snapshot of before) {
        const now = await this.facts.findById(snapshot.fact.id, m);
        if (!now) {
          events.push({
            legacyId: snapshot.fact.legacyId,
            change: FactChange.DELETED,
            fact: snapshot.fact,
            superseder: snapshot.superseder,
            before: snapshot,
            actorId,
            gone: true,
          });
          continue;
        }
        const superseder = await this.stateOf(m, now.supersededBy);
        if (
          viewKey(now) === viewKey(snapshot.fact) &&
          JSON.stringify(superseder) === JSON.stringify(snapshot.superseder)
        )
          continue;
        events.push({
          legacyId: now.legacyId,
          change: FactChange.UPDATED,
          fact: now,
          superseder,
          before: snapshot,
          actorId,
        });
      }
      return events;
    };
  }

  /** Publishes events after their transaction committed; a failed publish never fails a write. */
  async publish(events: FactEvent[]): Promise<void> {
    for (const event of events) {
      await this.bus.publishAfterCommit(topics.legacyFacts(event.legacyId), event, 'fact event');
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
    const now =
      !event.gone && canSee(event.fact, viewerId)
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
    sharedUpdatedAt: date(fact.sharedUpdatedAt)!,
  };
}
