import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingRepository } from '../embeddings/embedding.repository.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { normalizeFact } from './fact-relations.js';
import { canSee, historyEntryForOthers } from './fact-visibility.js';
import { FactEntity, FactHistoryEntity, FactSourceEntity } from './fact.entity.js';
import { FactAction, FactCategory, FactChange, FactStatus, FactVisibility } from './fact.enums.js';
import { FACT_KIND, FactFilterSql, FactRepository } from './fact.repository.js';
import { FactErrorCode, FactException } from './facts.exception.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';
import { FactWriterService, NewFactInput, validFactContent } from './fact-writer.service.js';

/**
 * The family's review of facts, as the resolvers use it: list, read, edit, share, delete,
 * restore and history, each authorized here. Writing goes through FactWriterService, events
 * through FactEventsService.
 */
@Injectable()
export class FactsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly facts: FactRepository,
    private readonly legacies: LegaciesService,
    private readonly legacyRepo: LegacyRepository,
    private readonly embeddings: EmbeddingService,
    private readonly vectors: EmbeddingRepository,
    private readonly writer: FactWriterService,
    private readonly events: FactEventsService,
    private readonly config: AppConfig,
  ) {}

  /** addFact: a member writes a fact by hand (FactWriterService.add). */
  add(user: UserEntity, input: NewFactInput): Promise<FactEntity> {
    return this.writer.add(user, input);
  }

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
    const content = input.content != null ? validFactContent(input.content) : fact.content;
    const category = input.category ?? fact.category;
    if (content === fact.content && category === fact.category) return fact;
    const normalized = normalizeFact(content);
    const prepared = content !== fact.content ? await this.writer.prepare([content]) : null;
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
        await this.writer.storeVector(m, changed, prepared, 0);
      }
      await this.facts.addHistory(m, changed, FactAction.UPDATED, { actorId: user.id });
      events.push(await this.events.event(m, FactChange.UPDATED, changed, current, user.id));
      return changed;
    });
    await this.events.publish(events);
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
      return this.writer.changeVisibility(m, current, visibility, user.id, events);
    });
    await this.events.publish(events);
    return result;
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
      events.push(await this.events.event(m, FactChange.DELETED, deleted, current, user.id));
      events.push(...(await this.events.supersededEvents(m, deleted, current, user.id)));
      return deleted;
    });
    await this.events.publish(events);
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
      events.push(await this.events.event(m, FactChange.RESTORED, restored, current, user.id));
      events.push(...(await this.events.supersededEvents(m, restored, current, user.id)));
      return restored;
    });
    await this.events.publish(events);
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
}
