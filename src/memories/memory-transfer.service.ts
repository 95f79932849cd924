import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryEvents } from './memory-events.js';
import { ImportItem, parseImport, toCsvExport, toExported, toJsonExport } from './memory-export.js';
import { normalizeMemory, slotOf } from './memory-text.js';
import {
  MemoryChangeAction,
  MemoryExportFormat,
  MemoryHistoryAction,
  MemorySource,
  MemoryStatus,
} from './memory.enums.js';
import { MemoryRepository, NewMemory } from './memory.repository.js';
import { MEMORY_KIND } from './memory-sql.js';
import { MemoryTransferRepository } from './memory-transfer.repository.js';

/** Imports up to this size are embedded inline; larger ones are left to the sweeper. */
const INLINE_EMBED_MAX = 256;

export interface ImportResult {
  importedCount: number;
  mergedCount: number;
  skippedCount: number;
  memoryIds: string[];
}

/**
 * Export and import of the user's memories. Kept apart from MemoriesService: an import is a
 * second write path (bulk, merging by reference as well as by text, linking back only what is
 * the user's) with rules of its own, where every other save goes through MemoryWriterService.
 */
@Injectable()
export class MemoryTransferService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly transfer: MemoryTransferRepository,
    private readonly events: MemoryEvents,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
    private readonly legacies: LegaciesService,
    private readonly embeddings: EmbeddingService,
  ) {}

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
}
