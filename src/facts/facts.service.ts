import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { FactAccessService } from './fact-access.service.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';
import { FactHistoryRepository } from './fact-history.repository.js';
import { normalizeFact } from './fact-relations.js';
import { FactSourceRepository } from './fact-source.repository.js';
import { FactVectorsService } from './fact-vectors.service.js';
import { canFindToRestore, canSee, historyEntryAsSeenBy, listViewer } from './fact-visibility.js';
import { validFactContent } from './fact-writer.service.js';
import { FactEntity, FactHistoryEntity, FactSourceEntity } from './fact.entity.js';
import { FactAction, FactCategory, FactChange, FactStatus } from './fact.enums.js';
import { FactRepository } from './fact.repository.js';
import { FactErrorCode, FactException } from './facts.exception.js';
import { FactFilterSql, VisibleFactRepository } from './visible-fact.repository.js';

type PageArgs = { first?: number; after?: string };

/**
 * The family's review of facts, as the resolvers use it: list, read, edit, delete, restore and
 * history, each authorized through FactAccessService. Writing new facts goes through
 * FactWriterService, sharing through FactSharingService, events through FactEventsService.
 */
@Injectable()
export class FactsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly facts: FactRepository,
    private readonly visible: VisibleFactRepository,
    private readonly factHistory: FactHistoryRepository,
    private readonly sources: FactSourceRepository,
    private readonly access: FactAccessService,
    private readonly legacyRepo: LegacyRepository,
    private readonly embeddings: EmbeddingService,
    private readonly vectors: FactVectorsService,
    private readonly events: FactEventsService,
    private readonly config: AppConfig,
  ) {}

  /** FactAccessService.getVisible, for the modules that read facts through this service. */
  getVisible(user: UserEntity, id: string): Promise<FactEntity> {
    return this.access.getVisible(user, id);
  }

  async list(
    user: UserEntity,
    legacyId: string,
    filter:
      (FactFilterSql & { search?: string | null; asFamily?: boolean | null }) | null | undefined,
    args: PageArgs,
  ): Promise<Connection<FactEntity>> {
    await this.access.requireMember(user, legacyId);
    // What the family sees is less than any member sees: every member may ask for it.
    const viewerId = listViewer(user.id, filter?.asFamily);
    const { request, after } = this.pageOf(args);
    const text = filter?.search?.trim() ?? '';
    const search = text
      ? {
          text,
          vector: await this.embeddings.embedQuery(text),
          minSimilarity: this.config.env.FACT_SEARCH_MIN_SIMILARITY,
        }
      : null;
    const rows = await this.visible.page(
      legacyId,
      viewerId,
      filter ?? {},
      request.limit + 1,
      after,
      search,
    );
    return toConnection(rows, request, cursorOf);
  }

  /** The user's own facts in legacies they are no longer a member of (to delete them). */
  async listLeftBehind(user: UserEntity, args: PageArgs): Promise<Connection<FactEntity>> {
    const { request, after } = this.pageOf(args);
    const memberOf = await this.legacyRepo.legacyIdsOf(user.id);
    const rows = await this.visible.pageLeftBehind(user.id, memberOf, request.limit + 1, after);
    return toConnection(rows, request, cursorOf);
  }

  async update(
    user: UserEntity,
    input: { id: string; content?: string | null; category?: FactCategory | null },
  ): Promise<FactEntity> {
    const fact = await this.access.getVisible(user, input.id);
    this.access.requireAuthor(user, fact, 'Only its author can change what a fact says.');
    if (fact.status === FactStatus.DELETED) {
      throw new FactException(FactErrorCode.FACT_DELETED, 'Restore this fact before editing it.');
    }
    const content = input.content != null ? validFactContent(input.content) : fact.content;
    const category = input.category ?? fact.category;
    if (content === fact.content && category === fact.category) return fact;
    const normalized = normalizeFact(content);
    const prepared = content !== fact.content ? await this.vectors.prepare([content]) : null;
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      await this.facts.lockAuthor(m, fact.legacyId, fact.authorId);
      const current = await this.facts.lockById(m, fact.id);
      if (!current || current.status === FactStatus.DELETED) throw FactException.notFound();
      if (
        normalized !== current.normalized &&
        current.status === FactStatus.ACTIVE &&
        (await this.hasActiveTwin(m, fact, normalized))
      ) {
        throw new FactException(
          FactErrorCode.DUPLICATE_FACT,
          'You already have a fact that says this.',
          'content',
        );
      }
      const changed = await this.facts.update(m, fact.id, { content, normalized, category });
      if (prepared) await this.vectors.replace(m, changed, prepared);
      await this.factHistory.add(m, changed, FactAction.UPDATED, { actorId: user.id });
      events.push(await this.events.event(m, FactChange.UPDATED, changed, current, user.id));
      return changed;
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
    const fact = own?.authorId === user.id ? own : await this.access.getVisible(user, id);
    await this.access.requireAuthorOrManager(user, fact);
    if (fact.status === FactStatus.DELETED) return fact;
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      // In the author's order (their lock, then the row): the facts it supersedes change too.
      await this.facts.lockAuthor(m, fact.legacyId, fact.authorId);
      const current = await this.facts.lockById(m, id);
      if (!current) throw FactException.notFound();
      if (current.status === FactStatus.DELETED) return current;
      const deleted = await this.facts.softDelete(m, id, user.id);
      await this.factHistory.add(m, deleted, FactAction.DELETED, { actorId: user.id });
      events.push(
        ...(await this.events.withSuperseded(m, FactChange.DELETED, deleted, current, user.id)),
      );
      return deleted;
    });
    await this.events.publish(events);
    return this.access.seenBy(user, result);
  }

  /** Undoes a delete: its author, or the owner or admin who deleted it. */
  async restore(user: UserEntity, id: string): Promise<FactEntity> {
    const fact = await this.facts.findById(id);
    if (!fact || !canFindToRestore(fact, user.id)) throw FactException.notFound();
    await this.access.requireMemberOfFact(user, fact.legacyId);
    if (fact.status !== FactStatus.DELETED) return this.access.seenBy(user, fact);
    if (fact.authorId !== user.id && !(await this.access.isManager(user, fact.legacyId))) {
      throw FactException.notFound();
    }
    const events: FactEvent[] = [];
    const result = await this.dataSource.transaction(async (m) => {
      await this.facts.lockAuthor(m, fact.legacyId, fact.authorId);
      const current = await this.facts.lockById(m, id);
      if (!current) throw FactException.notFound();
      if (current.status !== FactStatus.DELETED) return current;
      const twin = current.supersededBy ? null : await this.activeTwin(m, fact, current.normalized);
      if (twin && canSee(twin, user.id)) {
        throw new FactException(
          FactErrorCode.DUPLICATE_FACT,
          'An active fact already says this; this one stays deleted.',
        );
      }
      if (twin) {
        // The author's private fact says it again, and an admin who cannot see it restores:
        // the fact comes back replaced by it, as a shared fact superseded by a private one
        // (the family sees it active; its author, superseded). Refusing would tell of it.
        await this.facts.supersede(m, id, twin.id, new Date());
      }
      const restored = await this.facts.restore(m, id);
      await this.factHistory.add(m, restored, FactAction.RESTORED, { actorId: user.id });
      events.push(
        ...(await this.events.withSuperseded(m, FactChange.RESTORED, restored, current, user.id)),
      );
      return restored;
    });
    await this.events.publish(events);
    return this.access.seenBy(user, result);
  }

  /**
   * A fact's changes, oldest first. Other members see those made while it was shared, without
   * the author's mentions or a supersession by a fact they cannot see (fact-visibility.ts).
   */
  async history(user: UserEntity, id: string): Promise<FactHistoryEntity[]> {
    const fact = await this.access.getVisible(user, id);
    const rows = await this.factHistory.forViewer(id, user.id);
    return rows.flatMap(({ relatedVisible, supersessionVisible, ...entry }) => {
      const seen = historyEntryAsSeenBy(entry, fact, user.id, relatedVisible, supersessionVisible);
      return seen ? [seen] : [];
    });
  }

  /** Facts by id that the viewer may see, as they see them (others are left out). */
  findVisibleByIds(viewerId: string, ids: readonly string[]): Promise<FactEntity[]> {
    return this.visible.findByIds(ids, viewerId);
  }

  /** Sources of facts, for their authors. */
  sourcesOf(factIds: readonly string[]): Promise<FactSourceEntity[]> {
    return this.sources.ofFacts(factIds);
  }

  /**
   * Whether another of the author's active facts says exactly this: an edit or a restore must
   * not make two (the writer turns a new one into a mention instead).
   */
  private async hasActiveTwin(
    m: EntityManager,
    fact: { legacyId: string; authorId: string },
    normalized: string,
  ): Promise<boolean> {
    return (await this.activeTwin(m, fact, normalized)) !== null;
  }

  private async activeTwin(
    m: EntityManager,
    fact: { legacyId: string; authorId: string },
    normalized: string,
  ): Promise<FactEntity | null> {
    const pool = await this.facts.comparable(m, fact.legacyId, fact.authorId);
    return pool.find((f) => f.status === FactStatus.ACTIVE && f.normalized === normalized) ?? null;
  }

  private pageOf(args: PageArgs) {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor ? decodeCursor(request.cursor, 'after', 2) : undefined;
    return { request, after };
  }
}

/** Both fact pages are ordered by their cursor key, then id. */
function cursorOf(fact: FactEntity & { cursorKey: string | number }): string {
  return encodeCursor([fact.cursorKey, fact.id]);
}
