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
import { EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { extractMemoriesHeuristic } from '../llm/heuristics/memory-patterns.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryEvents } from './memory-events.js';
import { ImportItem, parseImport, toCsvExport, toExported, toJsonExport } from './memory-export.js';
import { normalizeMemory, slotOf } from './memory-text.js';
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
import { MEMORY_KIND, MemoryListFilter, MemoryRepository, NewMemory } from './memory.repository.js';
import { MemoryWriterService, SaveResult } from './memory-writer.service.js';
import { MemoryLedgerRepository } from './memory-ledger.repository.js';
import { MemoryUseRepository } from './memory-use.repository.js';
import { MemoryTransferRepository } from './memory-transfer.repository.js';

export const CLEAR_ALL_CONFIRMATION = 'DELETE ALL MY MEMORIES';

const DAY_MS = 86_400_000;
/** Imports up to this size are embedded inline; larger ones are left to the sweeper. */
const INLINE_EMBED_MAX = 256;

export interface MemoryFilterInput {
  type?: MemoryType | null;
  legacyId?: string | null;
  conversationId?: string | null;
  status?: MemoryStatus | null;
  from?: Date | null;
  to?: Date | null;
  search?: string | null;
}

export interface ImportResult {
  importedCount: number;
  mergedCount: number;
  skippedCount: number;
  memoryIds: string[];
}

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** The user's controls over their memories. Everything is scoped to the calling user. */
@Injectable()
export class MemoriesService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly transfer: MemoryTransferRepository,
    private readonly ledger: MemoryLedgerRepository,
    private readonly uses: MemoryUseRepository,
    private readonly writer: MemoryWriterService,
    private readonly events: MemoryEvents,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
    private readonly legacies: LegaciesService,
    private readonly conversations: ConversationsService,
    private readonly embeddings: EmbeddingService,
  ) {}

  private get undoMs(): number {
    return this.config.env.MEMORY_UNDO_DAYS * DAY_MS;
  }

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
      const rows = await this.repo.search(
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
    const rows = await this.repo.page(user.id, f, request.limit + 1, after);
    return toConnection(rows, request, (m) =>
      encodeCursor([new Date(m.createdAt).toISOString(), m.id]),
    );
  }

  /** The user asks Keepsake to remember something: saved at full confidence. */
  async rememberThis(
    user: UserEntity,
    input: { content: string; type?: MemoryType | null; legacyId?: string | null },
  ): Promise<SaveResult> {
    const content = (input.content ?? '').trim();
    const max = this.config.env.MEMORY_MAX_LENGTH;
    if (content.length === 0 || content.length > max) {
      throw new MemoryException(
        MemoryErrorCode.INVALID_MEMORY,
        `A memory has 1 to ${max} characters.`,
        'content',
      );
    }
    if (input.legacyId) await this.legacies.requireMember(user.id, input.legacyId);
    const type =
      input.type ??
      (extractMemoriesHeuristic({ userTurn: content })[0]?.type as MemoryType | undefined) ??
      MemoryType.FACT;
    const batch = await this.writer.save(user.id, input.legacyId ?? null, [
      { type, content, confidence: 1, source: MemorySource.MANUAL },
    ]);
    return batch!.results[0];
  }

  /** Soft delete: restorable with restoreMemory during the undo window. */
  async forget(user: UserEntity, id: string): Promise<MemoryEntity> {
    const memory = await this.get(user, id);
    if (memory.status === MemoryStatus.DELETED) return memory;
    const now = this.clock.now();
    const [forgotten] = await this.repo.forget(user.id, { ids: [id] }, now);
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
    const now = this.clock.now();
    const forgotten = await this.repo.forget(
      user.id,
      {
        conversationId: filter.conversationId ?? undefined,
        sourceMessageId: filter.sourceMessageId ?? undefined,
      },
      now,
    );
    const ids = forgotten.map((m) => m.id);
    const until = ids.length > 0 ? new Date(now.getTime() + this.undoMs) : null;
    await this.events.many(user.id, MemoryChangeAction.FORGOTTEN, ids, now, until);
    return { ids, restorableUntil: until };
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
      if (new Date(memory.deletedAt!).getTime() + this.undoMs < now.getTime()) {
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

  /** Deletes every memory of the user and their vectors now, with no undo. */
  async clearAll(user: UserEntity, confirm: string): Promise<number> {
    if (confirm !== CLEAR_ALL_CONFIRMATION) {
      throw new MemoryException(
        MemoryErrorCode.CONFIRMATION_REQUIRED,
        `Type "${CLEAR_ALL_CONFIRMATION}" to confirm.`,
        'confirm',
      );
    }
    const ids = await this.repo.deleteAll(user.id);
    await this.events.many(user.id, MemoryChangeAction.FORGOTTEN, ids, this.clock.now(), null);
    return ids.length;
  }

  async export(user: UserEntity, format: MemoryExportFormat) {
    const now = this.clock.now();
    const rows = (await this.transfer.exportRows(user.id)).map(toExported);
    const day = now.toISOString().slice(0, 10);
    return format === MemoryExportFormat.CSV
      ? {
          format,
          filename: `keepsake-memories-${day}.csv`,
          contentType: 'text/csv; charset=utf-8',
          count: rows.length,
          data: toCsvExport(rows),
        }
      : {
          format,
          filename: `keepsake-memories-${day}.json`,
          contentType: 'application/json',
          count: rows.length,
          data: toJsonExport(rows, now),
        };
  }

  /**
   * Takes back an export. A memory the user already has (same id or source reference, or the
   * same text in the same scope) is merged rather than added; the other system's id is kept as
   * `sourceReference`. Legacies, conversations and turns are linked back only when they are the
   * user's; otherwise the memory becomes global and the original ids stay in its history.
   */
  async import(user: UserEntity, json: string): Promise<ImportResult> {
    const items = parseImport(json, {
      maxItems: this.config.env.MEMORY_IMPORT_MAX,
      maxLength: this.config.env.MEMORY_MAX_LENGTH,
    });
    const now = this.clock.now();
    const live = items.filter((i) => i.status !== MemoryStatus.DELETED);
    const skippedCount = items.length - live.length;

    const legacyIds = [...new Set(live.flatMap((i) => (i.legacyId ? [i.legacyId] : [])))];
    const members = await this.legacies.memberOf(user.id, legacyIds);
    const owned = await this.transfer.ownedSources(
      user.id,
      [...new Set(live.flatMap((i) => (i.conversationId ? [i.conversationId] : [])))],
      [...new Set(live.flatMap((i) => (i.sourceMessageId ? [i.sourceMessageId] : [])))],
    );

    // Within the file, a repeated memory (same scope and text) merges into its first copy.
    const firsts = new Map<string, { item: ImportItem; row: NewMemory; refs: string[] }>();
    let mergedCount = 0;
    for (const item of live) {
      const row = this.importedRow(user.id, item, members, owned, now);
      const key = `${row.legacyId ?? ''}|${row.normalized}`;
      const first = firsts.get(key);
      const refs = [item.ref, item.sourceReference].filter((r): r is string => !!r);
      if (first) {
        first.row.referenceCount += row.referenceCount;
        if (
          row.lastReferencedAt &&
          (!first.row.lastReferencedAt || row.lastReferencedAt > first.row.lastReferencedAt)
        ) {
          first.row.lastReferencedAt = row.lastReferencedAt;
        }
        first.refs.push(...refs);
        mergedCount++;
        continue;
      }
      firsts.set(key, { item, row, refs });
    }
    const candidates = [...firsts.values()];
    const embedded =
      candidates.length <= INLINE_EMBED_MAX
        ? await this.embeddings.embedForStorage(candidates.map((c) => c.row.content))
        : [];

    const result = await this.repo.transaction(async (m) => {
      await this.repo.lockUser(m, user.id);
      const known = await this.transfer.knownReferences(
        m,
        user.id,
        candidates.flatMap((c) => c.refs),
      );
      const existing = await this.repo.findByNormalized(
        m,
        user.id,
        candidates.map((c) => c.row.normalized),
      );
      const ids = new Map<string, string>();
      const merged: string[] = [];
      const inserts: { candidate: (typeof candidates)[number]; index: number }[] = [];
      for (const [index, c] of candidates.entries()) {
        const already = c.refs.map((r) => known.get(r)).find((k) => k);
        if (already) {
          c.refs.forEach((r) => ids.set(r, already.id));
          merged.push(already.id);
          continue;
        }
        const same = existing.find(
          (e) =>
            e.normalized === c.row.normalized &&
            (e.legacyId === c.row.legacyId || (e.legacyId === null && c.row.legacyId !== null)),
        );
        if (same) {
          await this.transfer.mergeImported(
            m,
            same.id,
            c.row.referenceCount,
            c.row.lastReferencedAt,
          );
          c.refs.forEach((r) => ids.set(r, same.id));
          merged.push(same.id);
          continue;
        }
        inserts.push({ candidate: c, index });
      }
      const rows = await this.repo.insertMany(
        m,
        inserts.map((i) => i.candidate.row),
      );
      for (const [n, row] of rows.entries()) {
        inserts[n].candidate.refs.forEach((r) => ids.set(r, row.id));
        if (embedded.length > 0) {
          await this.embeddings.store(
            MEMORY_KIND,
            [{ id: row.id, legacyId: row.legacyId, userId: user.id }],
            sliceEmbedded(embedded, inserts[n].index),
            m,
          );
        }
      }
      // Supersession links point at the new ids when both memories came in.
      await this.transfer.linkSupersession(
        m,
        inserts.flatMap((ins, n) => {
          const target = ins.candidate.item.supersededBy
            ? ids.get(ins.candidate.item.supersededBy)
            : undefined;
          return target ? [{ id: rows[n].id, supersededBy: target }] : [];
        }),
      );
      const scopes = new Set(rows.map((r) => r.legacyId));
      const archived: string[] = [];
      for (const scope of scopes) {
        archived.push(
          ...(await this.repo.archiveOverCap(
            m,
            user.id,
            scope,
            this.config.env.MEMORY_MAX_ACTIVE,
            [],
            now,
          )),
        );
      }
      return { inserted: rows.map((r) => r.id), merged, archived };
    });
    await this.events.many(user.id, MemoryChangeAction.SAVED, result.inserted, now);
    await this.events.many(user.id, MemoryChangeAction.UPDATED, [...new Set(result.merged)], now);
    await this.events.many(user.id, MemoryChangeAction.ARCHIVED, result.archived, now);
    return {
      importedCount: result.inserted.length,
      mergedCount: mergedCount + result.merged.length,
      skippedCount,
      memoryIds: [...new Set([...result.inserted, ...result.merged])],
    };
  }

  private importedRow(
    userId: string,
    item: ImportItem,
    members: Set<string>,
    owned: { conversations: Map<string, string>; messages: Map<string, string> },
    now: Date,
  ): NewMemory {
    const legacyId = item.legacyId && members.has(item.legacyId) ? item.legacyId : null;
    const conversationId =
      item.conversationId &&
      legacyId !== null &&
      owned.conversations.get(item.conversationId) === legacyId
        ? item.conversationId
        : null;
    const sourceMessageId =
      item.sourceMessageId &&
      conversationId !== null &&
      owned.messages.get(item.sourceMessageId) === conversationId
        ? item.sourceMessageId
        : null;
    const details: Record<string, unknown> = {};
    if (item.ref) details.originalId = item.ref;
    if (item.source) details.originalSource = item.source;
    if (item.sourceReference && item.sourceReference !== item.ref) {
      details.originalSourceReference = item.sourceReference;
    }
    if (item.legacyId && !legacyId) details.originalLegacyId = item.legacyId;
    if (item.conversationId && !conversationId) {
      details.originalConversationId = item.conversationId;
    }
    if (item.sourceMessageId && !sourceMessageId) {
      details.originalSourceMessageId = item.sourceMessageId;
    }
    const slot = slotOf(item.content);
    const createdAt = item.createdAt ?? now;
    const archived = item.status === MemoryStatus.ARCHIVED;
    return {
      userId,
      legacyId,
      type: item.type,
      content: item.content,
      normalized: normalizeMemory(item.content),
      slotKey: slot?.key ?? null,
      slotValue: slot?.value ?? null,
      confidence: item.confidence,
      source: MemorySource.IMPORT,
      conversationId,
      sourceMessageId,
      sourceTurnIndex: item.sourceTurnIndex,
      conversationMode: item.conversationMode,
      sourceReference: item.ref ?? item.sourceReference,
      referenceCount: item.referenceCount,
      lastReferencedAt: item.lastReferencedAt,
      status: archived ? MemoryStatus.ARCHIVED : MemoryStatus.ACTIVE,
      validFrom: item.validFrom ?? createdAt,
      validTo: item.validTo,
      archivedAt: archived ? (item.archivedAt ?? now) : null,
      archiveReason: archived ? item.archiveReason : null,
      history: [
        ...item.history,
        { at: now.toISOString(), action: MemoryHistoryAction.IMPORTED, details },
      ],
      createdAt,
      updatedAt: now,
    };
  }

  async stats(user: UserEntity) {
    const counts = await this.repo.counts(user.id);
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
