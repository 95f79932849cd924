import { MemoryEntity, MemoryHistoryEntry } from './memory.entity.js';
import { MemoryStatus } from './memory.enums.js';
import { restorableUntil } from './memory-policy.js';
import { MemoryChangedModel, MemoryHistoryEntryModel, MemoryModel } from './models/memory.model.js';

function date(value: Date | string | null | undefined): Date | null {
  return value == null ? null : value instanceof Date ? value : new Date(value);
}

function historyEntry(
  entry: MemoryHistoryEntry | MemoryHistoryEntryModel,
): MemoryHistoryEntryModel {
  return {
    at: date(entry.at)!,
    action: entry.action,
    fromStatus: entry.fromStatus ?? null,
    relatedMemoryId: entry.relatedMemoryId ?? null,
    reason: entry.reason ?? null,
    details: entry.details ?? null,
  };
}

/** The GraphQL view of a memory: no owner, no normalized text, no vectors. */
export function toMemoryModel(memory: MemoryEntity, undoDays: number): MemoryModel {
  const deletedAt = date(memory.deletedAt);
  return {
    id: memory.id,
    type: memory.type,
    content: memory.content,
    confidence: Math.round(Number(memory.confidence) * 1000) / 1000,
    source: memory.source,
    legacyId: memory.legacyId,
    conversationId: memory.conversationId,
    sourceMessageId: memory.sourceMessageId,
    sourceTurnIndex: memory.sourceTurnIndex,
    conversationMode: memory.conversationMode,
    sourceReference: memory.sourceReference,
    referenceCount: memory.referenceCount,
    lastReferencedAt: date(memory.lastReferencedAt),
    status: memory.status,
    validFrom: date(memory.validFrom)!,
    validTo: date(memory.validTo),
    supersededBy: memory.supersededBy,
    archivedAt: date(memory.archivedAt),
    archiveReason: memory.archiveReason,
    deletedAt,
    restorableUntil:
      memory.status === MemoryStatus.DELETED && deletedAt
        ? restorableUntil(deletedAt, undoDays)
        : null,
    history: (memory.history ?? []).map(historyEntry),
    createdAt: date(memory.createdAt)!,
    updatedAt: date(memory.updatedAt)!,
  };
}

/**
 * A memory model back from an event payload: the PostgreSQL event bus carries JSON, so dates
 * arrive as strings (the in-process bus passes them through untouched).
 */
export function reviveMemoryModel(raw: MemoryModel): MemoryModel {
  return {
    ...raw,
    lastReferencedAt: date(raw.lastReferencedAt),
    validFrom: date(raw.validFrom)!,
    validTo: date(raw.validTo),
    archivedAt: date(raw.archivedAt),
    deletedAt: date(raw.deletedAt),
    restorableUntil: date(raw.restorableUntil),
    history: raw.history.map(historyEntry),
    createdAt: date(raw.createdAt)!,
    updatedAt: date(raw.updatedAt)!,
  };
}

/** What memoryChanged carries over the event bus. */
export interface MemoryChangedEvent {
  userId: string;
  action: MemoryChangedModel['action'];
  memoryIds: string[];
  memory: MemoryModel | null;
  undoUntil: Date | string | null;
  at: Date | string;
}

export function reviveChange(event: MemoryChangedEvent): MemoryChangedModel {
  return {
    action: event.action,
    memoryIds: event.memoryIds,
    memory: event.memory ? reviveMemoryModel(event.memory) : null,
    undoUntil: date(event.undoUntil),
    at: date(event.at)!,
  };
}
