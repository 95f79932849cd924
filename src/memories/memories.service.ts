import { Injectable } from '@nestjs/common';
import { CommonErrorCode, CommonException } from '../common/errors/domain.exception.js';
import { AppConfig } from '../config/app-config.js';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryEvents } from './memory-events.js';
import { MemoryEntity, MemoryHistoryEntry } from './memory.entity.js';
import {
  MemoryChangeAction,
  MemoryExportFormat,
  MemoryHistoryAction,
  MemorySource,
  MemoryStatus,
  MemoryType,
} from './memory.enums.js';
import { MemoryErrorCode, MemoryException } from './memory.exception.js';
import { ForgetScope, MemoryRepository } from './memory.repository.js';
import { MemoryListFilter, MemoryListRepository } from './memory-list.repository.js';
import { requestedContent, requestedMemory, restorableUntil } from './memory-policy.js';
import { MemoryWriterService, SaveResult } from './memory-writer.service.js';
import { MemoryLedgerRepository } from './memory-ledger.repository.js';
import { MemoryFenceRepository } from './memory-fence.repository.js';
import { MemoryUseRepository } from './memory-use.repository.js';
import { ImportResult, MemoryTransferService } from './memory-transfer.service.js';

export const CLEAR_ALL_CONFIRMATION = 'DELETE ALL MY MEMORIES';

export interface MemoryFilterInput {
  type?: MemoryType | null;
  legacyId?: string | null;
  conversationId?: string | null;
  status?: MemoryStatus | null;
  from?: Date | null;
  to?: Date | null;
  search?: string | null;
}

/** Memories forgotten together: restorable until the same moment. */
export interface ForgetResult {
  memories: MemoryEntity[];
  restorableUntil: Date | null;
}

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * The user's controls over their memories. Everything is scoped to the calling user. Chat
 * commands (MemoryCommandsService) forget through forgetWhere here, so that forgetting has one
 * undo window and one event however it was asked for.
 */
@Injectable()
export class MemoriesService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly listing: MemoryListRepository,
    private readonly ledger: MemoryLedgerRepository,
    private readonly uses: MemoryUseRepository,
    private readonly writer: MemoryWriterService,
    private readonly transfer: MemoryTransferService,
    private readonly events: MemoryEvents,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
    private readonly legacies: LegaciesService,
    private readonly conversations: ConversationsService,
    private readonly embeddings: EmbeddingService,
    private readonly fences: MemoryFenceRepository,
  ) {}

  async get(user: UserEntity, id: string): Promise<MemoryEntity> {
    const memory = await this.repo.findOwned(user.id, id);
    if (!memory) throw MemoryException.notFound();
    return memory;
  }

  async list(
    user: UserEntity,
    filter: MemoryFilterInput | null | undefined,
    args: { first?: number; after?: string },
  ): Promise<Connection<MemoryEntity>> {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const f: MemoryListFilter = {
      type: filter?.type,
      legacyId: filter?.legacyId,
      conversationId: filter?.conversationId,
      statuses: filter?.status ? [filter.status] : [],
      from: filter?.from,
      to: filter?.to,
    };
    const search = filter?.search?.trim();
    if (search) {
      const offset = request.cursor ? Number(decodeCursor(request.cursor, 'after', 1)[0]) : 0;
      if (!Number.isInteger(offset) || offset < 0) {
        throw new CommonException(
          CommonErrorCode.INVALID_CURSOR,
          'The cursor is not valid.',
          'after',
        );
      }
      const q = await this.embeddings.embedQuery(search);
      const rows = await this.listing.search(
        user.id,
        f,
        search,
        q,
        this.config.env.MEMORY_SEARCH_MIN_SIMILARITY,
        request.limit + 1,
        offset,
      );
      const positions = new Map(rows.map((r, i) => [r.id, offset + i + 1]));
      return toConnection(rows, request, (m) => encodeCursor([positions.get(m.id)!]));
    }
    const after = request.cursor
      ? (() => {
          const [createdAt, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { createdAt, id };
        })()
      : undefined;
    const rows = await this.listing.page(user.id, f, request.limit + 1, after);
    return toConnection(rows, request, (m) =>
      encodeCursor([new Date(m.createdAt).toISOString(), m.id]),
    );
  }

  /** The user asks Keepsake to remember something: saved at full confidence. */
  async rememberThis(
    user: UserEntity,
    input: { content: string; type?: MemoryType | null; legacyId?: string | null },
  ): Promise<SaveResult> {
    const checked = requestedContent(input.content, this.config.env.MEMORY_MAX_LENGTH);
    if ('invalid' in checked) {
      throw new MemoryException(MemoryErrorCode.INVALID_MEMORY, checked.invalid, 'content');
    }
    if (input.legacyId) await this.legacies.requireMember(user.id, input.legacyId);
    const batch = await this.writer.save(user.id, input.legacyId ?? null, [
      requestedMemory(checked.content, MemorySource.MANUAL, input.type),
    ]);
    return batch!.results[0];
  }

  /** Soft delete: restorable with restoreMemory during the undo window. */
  async forget(user: UserEntity, id: string): Promise<MemoryEntity> {
    const memory = await this.get(user, id);
    if (memory.status === MemoryStatus.DELETED) return memory;
    const now = this.clock.now();
    const [forgotten] = await this.forgetFenced(user.id, { ids: [id] }, now);
    // Forgotten concurrently: answer with what is stored.
    if (!forgotten) return this.get(user, id);
    await this.events.one(MemoryChangeAction.FORGOTTEN, forgotten, now);
    return forgotten;
  }

  /** Forgets every memory taken from a conversation or from one of its turns. */
  async forgetMany(
    user: UserEntity,
    filter: { conversationId?: string | null; sourceMessageId?: string | null },
  ): Promise<{ ids: string[]; restorableUntil: Date | null }> {
    if (!filter.conversationId && !filter.sourceMessageId) {
      throw new MemoryException(
        MemoryErrorCode.INVALID_FILTER,
        'Name the conversationId or the sourceMessageId whose memories to forget.',
        'filter',
      );
    }
    const forgotten = await this.forgetWhere(user, {
      conversationId: filter.conversationId ?? undefined,
      sourceMessageId: filter.sourceMessageId ?? undefined,
    });
    return {
      ids: forgotten.memories.map((m) => m.id),
      restorableUntil: forgotten.restorableUntil,
    };
  }

  /**
   * Forgets the user's memories that `scope` names, all restorable until the same moment, in
   * one event. A scope that names nothing forgets nothing: forgetting every memory at once is
   * clearAll's, behind its confirmation.
   */
  async forgetWhere(user: UserEntity, scope: ForgetScope): Promise<ForgetResult> {
    if (!scope.ids?.length && !scope.conversationId && !scope.sourceMessageId) {
      return { memories: [], restorableUntil: null };
    }
    const now = this.clock.now();
    const memories = await this.forgetFenced(user.id, scope, now);
    const until =
      memories.length > 0 ? restorableUntil(now, this.config.env.MEMORY_UNDO_DAYS) : null;
    const ids = memories.map((m) => m.id);
    await this.events.many(user.id, MemoryChangeAction.FORGOTTEN, ids, now, until);
    return { memories, restorableUntil: until };
  }

  /**
   * Forgets, and fences what was forgotten against extraction of what was said before: under the
   * user's memory lock, so that a save in flight either ran first (and its memory is forgotten
   * here) or sees the fence (memory-fence.repository.ts).
   */
  private forgetFenced(userId: string, scope: ForgetScope, now: Date): Promise<MemoryEntity[]> {
    return this.repo.transaction(async (m) => {
      await this.repo.lockUser(m, userId);
      const forgotten = await this.repo.forget(userId, scope, now, m);
      await this.fences.fenceMemories(
        m,
        userId,
        forgotten.map((f) => f.id),
      );
      return forgotten;
    });
  }

  /**
   * Undoes forgetting (within the undo window: back to the status it had) or archiving (back
   * to active; a scope at its cap then archives its least useful memory instead).
   */
  async restore(user: UserEntity, id: string): Promise<MemoryEntity> {
    const memory = await this.get(user, id);
    if (memory.status === MemoryStatus.ACTIVE) return memory;
    const now = this.clock.now();
    let to = MemoryStatus.ACTIVE;
    if (memory.status === MemoryStatus.DELETED) {
      const until = restorableUntil(new Date(memory.deletedAt!), this.config.env.MEMORY_UNDO_DAYS);
      if (until.getTime() < now.getTime()) {
        throw new MemoryException(
          MemoryErrorCode.UNDO_WINDOW_PASSED,
          `A forgotten memory can be restored for ${this.config.env.MEMORY_UNDO_DAYS} days only.`,
        );
      }
      const forgotten = [...(memory.history ?? [])]
        .reverse()
        .find((h: MemoryHistoryEntry) => h.action === MemoryHistoryAction.FORGOTTEN);
      if (forgotten?.fromStatus === MemoryStatus.ARCHIVED) to = MemoryStatus.ARCHIVED;
    }
    const { restored, archived } = await this.repo.transaction(async (m) => {
      await this.repo.lockUser(m, user.id);
      const row = await this.repo.restore(m, user.id, id, to, now);
      if (row) await this.fences.unfence(m, row.id);
      const over =
        row && to === MemoryStatus.ACTIVE
          ? await this.repo.archiveOverCap(
              m,
              user.id,
              row.legacyId,
              this.config.env.MEMORY_MAX_ACTIVE,
              [id],
              now,
            )
          : [];
      return { restored: row, archived: over };
    });
    if (!restored) throw MemoryException.notFound();
    await this.events.one(MemoryChangeAction.RESTORED, restored, now);
    await this.events.many(user.id, MemoryChangeAction.ARCHIVED, archived, now);
    return restored;
  }

  /**
   * Deletes every memory of the user and their vectors now, with no undo; and fences extraction
   * in flight or yet to run: nothing from a turn said before now is stored afterwards.
   */
  async clearAll(user: UserEntity, confirm: string): Promise<number> {
    if (confirm !== CLEAR_ALL_CONFIRMATION) {
      throw new MemoryException(
        MemoryErrorCode.CONFIRMATION_REQUIRED,
        `Type "${CLEAR_ALL_CONFIRMATION}" to confirm.`,
        'confirm',
      );
    }
    const ids = await this.repo.transaction(async (m) => {
      await this.repo.lockUser(m, user.id);
      await this.fences.fenceAll(m, user.id);
      return this.repo.deleteAll(user.id, m);
    });
    await this.events.many(user.id, MemoryChangeAction.FORGOTTEN, ids, this.clock.now(), null);
    return ids.length;
  }

  // Export and import are MemoryTransferService's; they stay reachable here with the user's
  // other controls, as MemoriesService is what the rest of the application is given.
  export(user: UserEntity, format: MemoryExportFormat) {
    return this.transfer.export(user, format);
  }

  import(user: UserEntity, json: string): Promise<ImportResult> {
    return this.transfer.import(user, json);
  }

  async stats(user: UserEntity) {
    const counts = await this.listing.counts(user.id);
    const sum = (pick: (c: (typeof counts)[number]) => boolean) =>
      counts.filter(pick).reduce((n, c) => n + c.count, 0);
    const extraction = await this.ledger.extractionTotals(user.id);
    const replies = await this.uses.replyTotals(user.id);
    const attempts = extraction.created + extraction.merged;
    return {
      total: sum(() => true),
      byType: Object.values(MemoryType).map((type) => ({
        type,
        count: sum((c) => c.type === type && c.status !== MemoryStatus.DELETED),
      })),
      byStatus: Object.values(MemoryStatus).map((status) => ({
        status,
        count: sum((c) => c.status === status),
      })),
      turnsExamined: extraction.turns,
      memoriesExtracted: extraction.created,
      creationRatePer10Turns:
        extraction.turns === 0 ? 0 : round((extraction.created / extraction.turns) * 10),
      replies: replies.replies,
      repliesUsingMemories: replies.withMemories,
      replyMemoryShare: replies.replies === 0 ? 0 : round(replies.withMemories / replies.replies),
      duplicatesMerged: extraction.merged,
      duplicateRate: attempts === 0 ? 0 : round(extraction.merged / attempts),
    };
  }

  /** For Message.usedMemories: the memories each turn was given, visible to this user. */
  async usedBy(user: UserEntity, messageIds: readonly string[]): Promise<MemoryEntity[][]> {
    const rows = await this.uses.usedByMessages(user.id, messageIds);
    return messageIds.map((id) => rows.filter((r) => r.messageId === id));
  }

  /** The user's own memories by id, in order (null where there is none of theirs). */
  async ownedByIds(user: UserEntity, ids: readonly string[]): Promise<(MemoryEntity | null)[]> {
    const found = new Map((await this.repo.findOwnedMany(user.id, ids)).map((m) => [m.id, m]));
    return ids.map((id) => found.get(id) ?? null);
  }

  /** For Memory.sourceMessage: the user's own turns only. */
  async sourceMessages(
    user: UserEntity,
    ids: readonly string[],
  ): Promise<(MessageEntity | null)[]> {
    const found = await this.conversations.findMessagesByIds(ids);
    const mine = new Map(found.filter((m) => m.userId === user.id).map((m) => [m.id, m]));
    return ids.map((id) => mine.get(id) ?? null);
  }
}
