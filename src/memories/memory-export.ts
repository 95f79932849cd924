import { MemoryEntity, MemoryHistoryEntry } from './memory.entity.js';
import {
  ArchiveReason,
  ConversationMode,
  MemoryHistoryAction,
  MemorySource,
  MemoryStatus,
  MemoryType,
} from './memory.enums.js';
import { MemoryErrorCode, MemoryException } from './memory.exception.js';

export const EXPORT_FORMAT_NAME = 'keepsake.memories';
export const EXPORT_VERSION = 1;

/** One memory as exported: every field the user can see. */
export interface ExportedMemory {
  id: string;
  type: MemoryType;
  content: string;
  confidence: number;
  status: MemoryStatus;
  source: MemorySource;
  legacyId: string | null;
  conversationId: string | null;
  sourceMessageId: string | null;
  sourceTurnIndex: number | null;
  conversationMode: ConversationMode | null;
  sourceReference: string | null;
  referenceCount: number;
  lastReferencedAt: string | null;
  validFrom: string;
  validTo: string | null;
  supersededBy: string | null;
  archivedAt: string | null;
  archiveReason: ArchiveReason | null;
  createdAt: string;
  updatedAt: string;
  history: MemoryHistoryEntry[];
}

export const EXPORT_COLUMNS: (keyof ExportedMemory)[] = [
  'id',
  'type',
  'content',
  'confidence',
  'status',
  'source',
  'legacyId',
  'conversationId',
  'sourceMessageId',
  'sourceTurnIndex',
  'conversationMode',
  'sourceReference',
  'referenceCount',
  'lastReferencedAt',
  'validFrom',
  'validTo',
  'supersededBy',
  'archivedAt',
  'archiveReason',
  'createdAt',
  'updatedAt',
  'history',
];

const iso = (d: Date | string | null): string | null =>
  d == null ? null : (d instanceof Date ? d : new Date(d)).toISOString();

export function toExported(m: MemoryEntity): ExportedMemory {
  return {
    id: m.id,
    type: m.type,
    content: m.content,
    confidence: Math.round(Number(m.confidence) * 1000) / 1000,
    status: m.status,
    source: m.source,
    legacyId: m.legacyId,
    conversationId: m.conversationId,
    sourceMessageId: m.sourceMessageId,
    sourceTurnIndex: m.sourceTurnIndex,
    conversationMode: m.conversationMode,
    sourceReference: m.sourceReference,
    referenceCount: m.referenceCount,
    lastReferencedAt: iso(m.lastReferencedAt),
    validFrom: iso(m.validFrom)!,
    validTo: iso(m.validTo),
    supersededBy: m.supersededBy,
    archivedAt: iso(m.archivedAt),
    archiveReason: m.archiveReason,
    createdAt: iso(m.createdAt)!,
    updatedAt: iso(m.updatedAt)!,
    history: m.history ?? [],
  };
}

export function toJsonExport(memories: ExportedMemory[], exportedAt: Date): string {
  return JSON.stringify(
    {
      format: EXPORT_FORMAT_NAME,
      version: EXPORT_VERSION,
      exportedAt: exportedAt.toISOString(),
      count: memories.length,
      memories,
    },
    null,
    2,
  );
}

/**
 * RFC 4180 CSV. A text cell that a spreadsheet would run as a formula (=, +, -, @) gets a
 * leading apostrophe; the JSON form is the exact one (and the one importMemories reads).
 */
export function toCsvExport(memories: ExportedMemory[]): string {
  const cell = (value: unknown, text: boolean): string => {
    if (value == null) return '';
    let s = typeof value === 'string' ? value : JSON.stringify(value);
    if (text && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [EXPORT_COLUMNS.join(',')];
  for (const m of memories) {
    lines.push(EXPORT_COLUMNS.map((c) => cell(m[c], c === 'content')).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** One memory of an import file, checked. Ids are the other system's: kept as references. */
export interface ImportItem {
  ref: string | null;
  type: MemoryType;
  content: string;
  confidence: number;
  status: MemoryStatus;
  source: string | null;
  legacyId: string | null;
  conversationId: string | null;
  sourceMessageId: string | null;
  sourceTurnIndex: number | null;
  conversationMode: ConversationMode | null;
  sourceReference: string | null;
  referenceCount: number;
  lastReferencedAt: Date | null;
  validFrom: Date | null;
  validTo: Date | null;
  supersededBy: string | null;
  archivedAt: Date | null;
  archiveReason: ArchiveReason | null;
  createdAt: Date | null;
  history: MemoryHistoryEntry[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function invalid(message: string): MemoryException {
  return new MemoryException(MemoryErrorCode.INVALID_IMPORT, message, 'json');
}

function oneOf<T extends string>(values: Record<string, T>, v: unknown, path: string): T {
  if (typeof v === 'string' && (Object.values(values) as string[]).includes(v)) return v as T;
  throw invalid(`${path} must be one of ${Object.values(values).join(', ')}.`);
}

function optionalString(v: unknown, path: string, max = 200): string | null {
  if (v == null || v === '') return null;
  if (typeof v !== 'string' || v.length > max) {
    throw invalid(`${path} must be a string of at most ${max} characters.`);
  }
  return v;
}

function optionalUuid(v: unknown, path: string): string | null {
  const s = optionalString(v, path);
  if (s !== null && !UUID.test(s)) throw invalid(`${path} must be an id.`);
  return s?.toLowerCase() ?? null;
}

function optionalDate(v: unknown, path: string): Date | null {
  if (v == null || v === '') return null;
  const d = typeof v === 'string' ? new Date(v) : null;
  if (!d || Number.isNaN(d.getTime())) throw invalid(`${path} must be an ISO date-time.`);
  return d;
}

function historyOf(v: unknown, path: string): MemoryHistoryEntry[] {
  if (v == null) return [];
  if (!Array.isArray(v) || v.length > 1000) throw invalid(`${path} must be a list.`);
  const actions = Object.values(MemoryHistoryAction) as string[];
  const statuses = Object.values(MemoryStatus) as string[];
  // Entries are kept as they were, minus anything that is not a well-formed change.
  return v.flatMap((e): MemoryHistoryEntry[] => {
    if (!e || typeof e !== 'object') return [];
    const entry = e as Record<string, unknown>;
    const at = typeof entry.at === 'string' ? new Date(entry.at) : null;
    if (!at || Number.isNaN(at.getTime()) || !actions.includes(entry.action as string)) return [];
    return [
      {
        at: at.toISOString(),
        action: entry.action as MemoryHistoryAction,
        ...(statuses.includes(entry.fromStatus as string)
          ? { fromStatus: entry.fromStatus as MemoryStatus }
          : {}),
        ...(typeof entry.relatedMemoryId === 'string'
          ? { relatedMemoryId: entry.relatedMemoryId.slice(0, 200) }
          : {}),
        ...(typeof entry.reason === 'string' ? { reason: entry.reason.slice(0, 500) } : {}),
        ...(entry.details && typeof entry.details === 'object' && !Array.isArray(entry.details)
          ? { details: entry.details as Record<string, unknown> }
          : {}),
      },
    ];
  });
}

/**
 * Reads an export (the object exportMemories(format: JSON) returns, or a bare list of
 * memories). Every problem names its place, such as `memories[3].type`.
 */
export function parseImport(json: string, limits: { maxItems: number; maxLength: number }) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw invalid('The import is not valid JSON.');
  }
  const list = Array.isArray(parsed)
    ? parsed
    : parsed && typeof parsed === 'object'
      ? (parsed as { memories?: unknown }).memories
      : undefined;
  if (!Array.isArray(list)) {
    throw invalid('Expected an export of memories: an object with a "memories" list.');
  }
  if (list.length > limits.maxItems) {
    throw new MemoryException(
      MemoryErrorCode.IMPORT_TOO_LARGE,
      `An import holds at most ${limits.maxItems} memories.`,
      'json',
    );
  }
  return list.map((raw, i): ImportItem => {
    const path = `memories[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      throw invalid(`${path} must be an object.`);
    }
    const r = raw as Record<string, unknown>;
    if (typeof r.content !== 'string' || r.content.trim().length === 0) {
      throw invalid(`${path}.content must be a non-empty string.`);
    }
    if (r.content.length > limits.maxLength) {
      throw invalid(`${path}.content has more than ${limits.maxLength} characters.`);
    }
    const confidence = r.confidence == null ? 1 : r.confidence;
    if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) {
      throw invalid(`${path}.confidence must be a number from 0 to 1.`);
    }
    const references = r.referenceCount == null ? 0 : r.referenceCount;
    if (!Number.isInteger(references) || (references as number) < 0) {
      throw invalid(`${path}.referenceCount must be a whole number, 0 or more.`);
    }
    const turn = r.sourceTurnIndex;
    if (turn != null && (!Number.isInteger(turn) || (turn as number) < 0)) {
      throw invalid(`${path}.sourceTurnIndex must be a whole number, 0 or more.`);
    }
    return {
      ref: optionalString(r.id, `${path}.id`),
      type: oneOf(MemoryType, r.type ?? MemoryType.FACT, `${path}.type`),
      content: r.content.trim(),
      confidence,
      status: oneOf(MemoryStatus, r.status ?? MemoryStatus.ACTIVE, `${path}.status`),
      source: optionalString(r.source, `${path}.source`, 40),
      legacyId: optionalUuid(r.legacyId, `${path}.legacyId`),
      conversationId: optionalUuid(r.conversationId, `${path}.conversationId`),
      sourceMessageId: optionalUuid(r.sourceMessageId, `${path}.sourceMessageId`),
      sourceTurnIndex: (turn as number | null | undefined) ?? null,
      conversationMode:
        r.conversationMode == null
          ? null
          : oneOf(ConversationMode, r.conversationMode, `${path}.conversationMode`),
      sourceReference: optionalString(r.sourceReference, `${path}.sourceReference`),
      referenceCount: references as number,
      lastReferencedAt: optionalDate(r.lastReferencedAt, `${path}.lastReferencedAt`),
      validFrom: optionalDate(r.validFrom, `${path}.validFrom`),
      validTo: optionalDate(r.validTo, `${path}.validTo`),
      supersededBy: optionalString(r.supersededBy, `${path}.supersededBy`),
      archivedAt: optionalDate(r.archivedAt, `${path}.archivedAt`),
      archiveReason:
        r.archiveReason == null
          ? null
          : oneOf(ArchiveReason, r.archiveReason, `${path}.archiveReason`),
      createdAt: optionalDate(r.createdAt, `${path}.createdAt`),
      history: historyOf(r.history, `${path}.history`),
    };
  });
}
