import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { UserEntity } from '../identity/user.entity.js';
import { visibilityChanger } from '../legacies/moderation.js';
import { FactAccessService } from './fact-access.service.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';
import { FactHistoryRepository } from './fact-history.repository.js';
import { FactEntity } from './fact.entity.js';
import { FactAction, FactChange, FactVisibility } from './fact.enums.js';
import { FactRepository } from './fact.repository.js';
import { FactErrorCode, FactException } from './facts.exception.js';

/** Sharing a fact with the family and taking it back: who may, and what it changes. */
@Injectable()
export class FactSharingService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly facts: FactRepository,
    private readonly history: FactHistoryRepository,
    private readonly access: FactAccessService,
    private readonly events: FactEventsService,
  ) {}

  /**
   * Its author shares or unshares a fact; an owner or admin can take a shared fact back to
   * private (moderation), never the other way (legacies/moderation.ts).
   */
  async setVisibility(
    user: UserEntity,
    id: string,
    visibility: FactVisibility,
  ): Promise<FactEntity> {
    const fact = await this.access.getVisible(user, id);
    const changer = visibilityChanger(fact, user.id, visibility === FactVisibility.SHARED);
    if (changer === 'refused') {
      throw new FactException(FactErrorCode.NOT_FACT_AUTHOR, 'Only its author can share a fact.');
    }
    if (changer === 'moderator') await this.access.requireAuthorOrManager(user, fact);
    if (fact.visibility === visibility) return fact;
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      // In the author's order (their lock, then the row): the facts it supersedes change too.
      await this.facts.lockAuthor(m, fact.legacyId, fact.authorId);
      const current = await this.facts.lockById(m, id);
      if (!current) throw FactException.notFound();
      return this.change(m, current, visibility, user.id, events);
    });
    await this.events.publish(events);
    return this.access.seenBy(user, result);
  }

  /** Shares or unshares inside the caller's transaction, with the events it causes. */
  async change(
    m: EntityManager,
    current: FactEntity,
    visibility: FactVisibility,
    actorId: string,
    events: FactEvent[],
  ): Promise<FactEntity> {
    if (current.visibility === visibility) return current;
    const changed = await this.facts.setVisibility(m, current.id, visibility);
    const moderated = actorId !== current.authorId;
    await this.history.add(m, changed, FactAction.VISIBILITY_CHANGED, {
      actorId,
      detail: moderated ? 'Taken back to private by an owner or admin of the legacy.' : null,
    });
    events.push(
      ...(await this.events.withSuperseded(
        m,
        FactChange.VISIBILITY_CHANGED,
        changed,
        current,
        actorId,
      )),
    );
    return changed;
  }
}
