import { Injectable } from '@nestjs/common';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { asSeenBy, visibilityState } from './fact-visibility.js';
import { FactEntity } from './fact.entity.js';
import { FactRepository } from './fact.repository.js';
import { FactErrorCode, FactException } from './facts.exception.js';
import { VisibleFactRepository } from './visible-fact.repository.js';

/**
 * Who may read or act on a fact, for every command and read that starts from one: what of it
 * the member sees is fact-visibility.ts's, which role may do what is decided here.
 */
@Injectable()
export class FactAccessService {
  constructor(
    private readonly visible: VisibleFactRepository,
    private readonly facts: FactRepository,
    private readonly legacies: LegaciesService,
  ) {}

  /**
   * What a command answers whoever ran it: the fact as they see it, even one they no longer
   * see (an admin took it back to private): never the row as stored, whose status and count
   * may tell of the author's private facts and mentions.
   */
  async seenBy(user: UserEntity, fact: FactEntity): Promise<FactEntity> {
    if (fact.authorId === user.id) return fact;
    const superseder = fact.supersededBy ? await this.facts.findById(fact.supersededBy) : null;
    return asSeenBy(fact, superseder && visibilityState(superseder), user.id);
  }

  /**
   * The fact as the user sees it (fact-visibility.ts), if they may; NOT_FOUND otherwise
   * (existence is not revealed).
   */
  async getVisible(user: UserEntity, id: string): Promise<FactEntity> {
    const [fact] = await this.visible.findByIds([id], user.id);
    if (!fact) throw FactException.notFound();
    await this.requireMemberOfFact(user, fact.legacyId);
    return fact;
  }

  requireMember(user: UserEntity, legacyId: string) {
    return this.legacies.requireMember(user.id, legacyId);
  }

  /** Membership of a fact's legacy, refused as the fact's NOT_FOUND so as not to reveal it. */
  async requireMemberOfFact(user: UserEntity, legacyId: string): Promise<void> {
    await this.legacies.requireMemberOr(user.id, legacyId, FactException.notFound);
  }

  isManager(user: UserEntity, legacyId: string): Promise<boolean> {
    return this.legacies.isManager(user.id, legacyId);
  }

  requireAuthor(user: UserEntity, fact: FactEntity, message: string): void {
    if (fact.authorId !== user.id) throw new FactException(FactErrorCode.NOT_FACT_AUTHOR, message);
  }

  /** The author, or an owner or admin of the legacy moderating a member's fact. */
  async requireAuthorOrManager(user: UserEntity, fact: FactEntity): Promise<void> {
    if (fact.authorId === user.id) return;
    if (!(await this.isManager(user, fact.legacyId))) {
      throw new FactException(
        FactErrorCode.NOT_FACT_AUTHOR,
        "Only its author, or an owner or admin of the legacy, can do this to a member's fact.",
      );
    }
  }
}
