import { registerEnumType } from '@nestjs/graphql';

export enum MemoryType {
  FACT = 'FACT',
  EMOTION = 'EMOTION',
  GOAL = 'GOAL',
  PATTERN = 'PATTERN',
  RELATIONSHIP = 'RELATIONSHIP',
  PREFERENCE = 'PREFERENCE',
}

export enum MemoryStatus {
  /** Used in replies. */
  ACTIVE = 'ACTIVE',
  /** Kept, listed, exported and restorable, but not used in replies. */
  ARCHIVED = 'ARCHIVED',
  /** Forgotten: restorable during the undo window, then purged for good. */
  DELETED = 'DELETED',
}

export enum MemorySource {
  CHAT = 'CHAT',
  MANUAL = 'MANUAL',
  IMPORT = 'IMPORT',
}

/** How the conversation a memory came from was being held when the memory was extracted. */
export enum ConversationMode {
  /** Keepsake's agent wrote the reply (sendMessage). */
  AGENT = 'AGENT',
  /** The client ran its own model and recorded the reply (recordAssistantMessage). */
  CLIENT = 'CLIENT',
}

export enum ArchiveReason {
  CAP = 'CAP',
  RETENTION = 'RETENTION',
  SUPERSEDED = 'SUPERSEDED',
}

export enum MemoryHistoryAction {
  CREATED = 'CREATED',
  IMPORTED = 'IMPORTED',
  SUPERSEDED = 'SUPERSEDED',
  ARCHIVED = 'ARCHIVED',
  REACTIVATED = 'REACTIVATED',
  FORGOTTEN = 'FORGOTTEN',
  RESTORED = 'RESTORED',
}

export enum MemoryChangeAction {
  SAVED = 'SAVED',
  UPDATED = 'UPDATED',
  FORGOTTEN = 'FORGOTTEN',
  RESTORED = 'RESTORED',
  ARCHIVED = 'ARCHIVED',
}

export enum MemoryExportFormat {
  JSON = 'JSON',
  CSV = 'CSV',
}

export enum MemorySaveOutcome {
  /** A new memory was stored. */
  CREATED = 'CREATED',
  /** It restated an existing memory, whose reference count went up. */
  MERGED = 'MERGED',
  /** It contradicted older memories, which it replaced (they are archived, with history). */
  SUPERSEDED = 'SUPERSEDED',
}

registerEnumType(MemoryType, { name: 'MemoryType' });
registerEnumType(MemoryStatus, { name: 'MemoryStatus' });
registerEnumType(MemorySource, { name: 'MemorySource' });
registerEnumType(ConversationMode, { name: 'ConversationMode' });
registerEnumType(ArchiveReason, { name: 'MemoryArchiveReason' });
registerEnumType(MemoryHistoryAction, { name: 'MemoryHistoryAction' });
registerEnumType(MemoryChangeAction, { name: 'MemoryChangeAction' });
registerEnumType(MemoryExportFormat, { name: 'MemoryExportFormat' });
registerEnumType(MemorySaveOutcome, { name: 'MemorySaveOutcome' });
