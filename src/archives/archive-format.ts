import { FactCategory, FactStatus, FactVisibility } from '../facts/fact.enums.js';
import { MessageRole } from '../conversations/message-role.enum.js';
import { StoryFormat, StoryKind, StoryVisibility } from '../stories/story.enums.js';
import type { ExportedMemory } from '../memories/memory-export.js';
import { ArchiveErrorCode, ArchiveException } from './archive.exception.js';
import {
  type Check,
  checker,
  date,
  int,
  num,
  obj,
  oneOf,
  optDate,
  optDay,
  optStr,
  plainText,
  str,
  strings,
  nonEmpty,
  within,
  day,
} from './archive-values.js';

/**
 * The legacy archive's format, version 1 (documented in docs/operations.md, "Legacy archives"): a ZIP
 * with `keepsake.json` (this manifest), one JSON Lines file per kind of item under `data/`, the
 * stories' original files under `stories/`, and pages to read it in a browser (`index.html`,
 * `conversations/*.html`, `stories/*.html`). Ids are the exporting Keepsake's, stable within
 * the archive; times are ISO 8601 in UTC.
 */
export const ARCHIVE_FORMAT = 'keepsake.legacy-archive';
export const ARCHIVE_VERSION = 1;
export const MANIFEST_PATH = 'keepsake.json';
export const INDEX_PATH = 'index.html';

/** The parts, in the order an import reads them (turns after their conversations). */
export const PARTS = [
  'facts',
  'stories',
  'conversations',
  'turns',
  'memories',
  'periodSummaries',
] as const;
export type ArchivePart = (typeof PARTS)[number];

export const PART_PATHS: Record<ArchivePart, string> = {
  facts: 'data/facts.jsonl',
  stories: 'data/stories.jsonl',
  conversations: 'data/conversations.jsonl',
  turns: 'data/turns.jsonl',
  memories: 'data/memories.jsonl',
  periodSummaries: 'data/period-summaries.jsonl',
};

export interface ArchivedPerson {
  id: string;
  /** As other members see them in the app; null when they gave none. */
  displayName: string | null;
}

export interface ArchivedLegacy {
  id: string;
  name: string;
  description: string | null;
  bornOn: string | null;
  diedOn: string | null;
  persona: string | null;
  createdAt: string;
}

export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  exportedAt: string;
  /** The member whose archive it is: what they could see when it was made. */
  exportedBy: ArchivedPerson;
  legacy: ArchivedLegacy;
  /** Everyone an item names (authors, participants): their id and display name, nothing more. */
  people: ArchivedPerson[];
  parts: Record<ArchivePart, { path: string; count: number }>;
  /** Bytes of the stories' original files, together. */
  storyBytes: number;
}

export interface ArchivedFact {
  id: string;
  authorId: string;
  content: string;
  category: FactCategory;
  visibility: FactVisibility;
  /** As the exporting member saw it. */
  status: FactStatus;
  confidence: number;
  mentionCount: number;
  validFrom: string;
  validTo: string | null;
  supersededBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ArchivedStory {
  id: string;
  authorId: string;
  title: string;
  kind: StoryKind;
  format: StoryFormat;
  visibility: StoryVisibility;
  occurredAt: string | null;
  createdAt: string;
  updatedAt: string;
  fileName: string | null;
  mimeType: string | null;
  sizeBytes: number;
  /** The original file's path inside the ZIP. */
  file: string;
  /** Its text, page by page, as Keepsake read it. */
  pages: { number: number; text: string }[];
}

export interface ArchivedConversation {
  id: string;
  title: string | null;
  startedBy: string;
  imported: boolean;
  participants: string[];
  /** For a conversation the member left: the turns from this index on are not theirs to read. */
  readableUntilTurn: number | null;
  turnCount: number;
  createdAt: string;
  lastActivityAt: string;
  /** The page of it inside the ZIP. */
  page: string;
}

export interface ArchivedTurn {
  id: string;
  conversationId: string;
  turnIndex: number;
  role: MessageRole;
  authorId: string;
  content: string;
  metadata: Record<string, unknown>;
  /** A notice rather than a reply (no language model, a failed reply). */
  placeholder: boolean;
  /** A reply made for another participant alone: its words are not in the archive. */
  withheld: boolean;
  occurredAt: string;
  createdAt: string;
}

/** A memory, in the item format of exportMemories (`keepsake.memories` version 1). */
export type ArchivedMemory = ExportedMemory;

export interface ArchivedPeriodSummary {
  id: string;
  period: 'WEEK' | 'MONTH' | 'YEAR';
  start: string;
  end: string;
  timeZone: string;
  startsAt: string;
  endsAt: string;
  summary: string;
  emotionalTone: string | null;
  keyThemes: string[];
  recurringPatterns: string[];
  people: string[];
  places: string[];
  conversationCount: number;
  turnCount: number;
  conversationIds: string[];
  aggregated: boolean;
  model: string;
  promptVersion: string | null;
  createdAt: string;
  updatedAt: string;
}

export const iso = (d: Date | string | null | undefined): string | null =>
  d == null ? null : (d instanceof Date ? d : new Date(d)).toISOString();

/** A file name safe inside a ZIP and on any disk (the stories' own rule for their files). */
export { safeFileName } from '../stories/story-files.js';

// ---- reading -----------------------------------------------------------------------------

export { badLine } from './archive-values.js';

const ID_MAX = 200;
/** The date-times of a memory line (`keepsake.memories`' item format). */
const MEMORY_DATES = ['lastReferencedAt', 'validFrom', 'validTo', 'archivedAt', 'createdAt'];

/** An IANA time zone this runtime knows (the period summaries' own come from the same list). */
function timeZone(r: Record<string, unknown>, key: string, fail: Check): string {
  const v = str(r, key, fail, 100);
  try {
    new Intl.DateTimeFormat('en', { timeZone: v });
  } catch {
    fail(`${key} is not a time zone (an IANA name such as Europe/Paris)`);
  }
  return v;
}

/** keepsake.json, checked: a ZIP that is not a legacy archive, or of a later version, is refused. */
export function parseManifest(json: string): ArchiveManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw ArchiveException.invalid(`${MANIFEST_PATH} is not valid JSON.`);
  }
  const unsupported = (message: string, field = 'file') =>
    new ArchiveException(ArchiveErrorCode.UNSUPPORTED_ARCHIVE, message, field);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw unsupported(`${MANIFEST_PATH} is not a Keepsake legacy archive's manifest.`);
  }
  const r = parsed as Record<string, unknown>;
  if (r.format !== ARCHIVE_FORMAT) {
    throw unsupported(
      `This is not a Keepsake legacy archive: ${MANIFEST_PATH} says its format is ${JSON.stringify(r.format ?? null)}, not "${ARCHIVE_FORMAT}".`,
      'format',
    );
  }
  if (typeof r.version !== 'number' || !Number.isInteger(r.version) || r.version < 1) {
    throw unsupported(`${MANIFEST_PATH} has no valid version.`, 'version');
  }
  if (r.version > ARCHIVE_VERSION) {
    throw unsupported(
      `This archive is of version ${r.version} of the format; this Keepsake reads versions up to ${ARCHIVE_VERSION}. Import it on a newer Keepsake.`,
      'version',
    );
  }
  const fail: Check = (what) => {
    throw ArchiveException.invalid(`${MANIFEST_PATH}: ${what}`);
  };
  // Kept as JSON with the upload, and the legacy's fields as text: checked at upload.
  plainText(r, fail);
  const legacy = obj(r.legacy, within(fail, 'legacy'));
  const inLegacy = within(fail, 'legacy');
  const exportedBy = obj(r.exportedBy, within(fail, 'exportedBy'));
  const parts = obj(r.parts, within(fail, 'parts'));
  const people = Array.isArray(r.people) ? r.people : fail('people must be a list');
  return {
    format: ARCHIVE_FORMAT,
    version: r.version,
    exportedAt: date(r, 'exportedAt', fail),
    exportedBy: {
      id: str(exportedBy, 'id', within(fail, 'exportedBy'), ID_MAX),
      displayName: optStr(exportedBy, 'displayName', within(fail, 'exportedBy'), 200),
    },
    legacy: {
      id: str(legacy, 'id', inLegacy, ID_MAX),
      name: nonEmpty(legacy, 'name', inLegacy, 200),
      description: optStr(legacy, 'description', inLegacy, 10_000),
      bornOn: optDay(legacy, 'bornOn', inLegacy),
      diedOn: optDay(legacy, 'diedOn', inLegacy),
      persona: optStr(legacy, 'persona', inLegacy, 20_000),
      createdAt: date(legacy, 'createdAt', inLegacy),
    },
    people: people.slice(0, 10_000).map((p, i) => {
      const person = obj(p, within(fail, `people[${i}]`));
      return {
        id: str(person, 'id', within(fail, `people[${i}]`), ID_MAX),
        displayName: optStr(person, 'displayName', within(fail, `people[${i}]`), 200),
      };
    }),
    parts: Object.fromEntries(
      PARTS.map((part) => {
        const entry = obj(parts[part], (what) => fail(`parts.${part}: ${what}`));
        if (entry.path !== PART_PATHS[part]) fail(`parts.${part}.path must be ${PART_PATHS[part]}`);
        return [
          part,
          { path: PART_PATHS[part], count: int(entry, 'count', within(fail, `parts.${part}`)) },
        ];
      }),
    ) as ArchiveManifest['parts'],
    storyBytes: r.storyBytes == null ? 0 : int(r, 'storyBytes', fail, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** One line of a part, parsed and checked; `line` is 1-based, for the message. */
export function parseLine<P extends ArchivePart>(
  part: P,
  text: string,
  line: number,
  limits: { maxMessageChars: number; maxStoryChars: number },
): LineOf<P> {
  const path = PART_PATHS[part];
  const fail = checker(path, line);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    fail('not valid JSON');
  }
  const r = obj(value, fail);
  plainText(r, fail);
  switch (part) {
    case 'facts':
      return {
        id: str(r, 'id', fail, ID_MAX),
        authorId: str(r, 'authorId', fail, ID_MAX),
        content: nonEmpty(r, 'content', fail, 2000),
        category: oneOf(r, 'category', FactCategory, fail),
        visibility: oneOf(r, 'visibility', FactVisibility, fail),
        status: oneOf(r, 'status', FactStatus, fail),
        confidence: num(r, 'confidence', fail, 0, 1),
        mentionCount: int(r, 'mentionCount', fail),
        validFrom: date(r, 'validFrom', fail),
        validTo: optDate(r, 'validTo', fail),
        supersededBy: optStr(r, 'supersededBy', fail, ID_MAX),
        createdAt: date(r, 'createdAt', fail),
        updatedAt: date(r, 'updatedAt', fail),
      } satisfies ArchivedFact as LineOf<P>;
    case 'stories': {
      const pages = Array.isArray(r.pages) ? r.pages : fail('pages must be a list');
      let chars = 0;
      const parsedPages = pages.map((p, i) => {
        const page = obj(p, (what) => fail(`pages[${i}]: ${what}`));
        const pageText = str(page, 'text', within(fail, `pages[${i}]`), limits.maxStoryChars);
        chars += pageText.length;
        return { number: int(page, 'number', within(fail, `pages[${i}]`), 1), text: pageText };
      });
      if (chars > limits.maxStoryChars) {
        fail(`its text has more than ${limits.maxStoryChars} characters (DOCUMENT_MAX_CHARS)`);
      }
      const file = str(r, 'file', fail, 500);
      if (!file.startsWith('stories/')) fail('file must be a path under stories/');
      return {
        id: str(r, 'id', fail, ID_MAX),
        authorId: str(r, 'authorId', fail, ID_MAX),
        title: str(r, 'title', fail, 300),
        kind: oneOf(r, 'kind', StoryKind, fail),
        format: oneOf(r, 'format', StoryFormat, fail),
        visibility: oneOf(r, 'visibility', StoryVisibility, fail),
        occurredAt: optDate(r, 'occurredAt', fail),
        createdAt: date(r, 'createdAt', fail),
        updatedAt: date(r, 'updatedAt', fail),
        fileName: optStr(r, 'fileName', fail, 500),
        mimeType: optStr(r, 'mimeType', fail, 200),
        sizeBytes: int(r, 'sizeBytes', fail, 0, Number.MAX_SAFE_INTEGER),
        file,
        pages: parsedPages,
      } satisfies ArchivedStory as LineOf<P>;
    }
    case 'conversations':
      return {
        id: str(r, 'id', fail, ID_MAX),
        title: optStr(r, 'title', fail, 200),
        startedBy: str(r, 'startedBy', fail, ID_MAX),
        imported: r.imported === true,
        participants: strings(r, 'participants', fail),
        readableUntilTurn: r.readableUntilTurn == null ? null : int(r, 'readableUntilTurn', fail),
        turnCount: int(r, 'turnCount', fail),
        createdAt: date(r, 'createdAt', fail),
        lastActivityAt: date(r, 'lastActivityAt', fail),
        page: str(r, 'page', fail, 500),
      } satisfies ArchivedConversation as LineOf<P>;
    case 'turns': {
      const metadata = r.metadata == null ? {} : obj(r.metadata, fail);
      return {
        id: str(r, 'id', fail, ID_MAX),
        conversationId: str(r, 'conversationId', fail, ID_MAX),
        turnIndex: int(r, 'turnIndex', fail),
        role: oneOf(r, 'role', MessageRole, fail),
        authorId: str(r, 'authorId', fail, ID_MAX),
        content: str(r, 'content', fail, limits.maxMessageChars),
        metadata,
        placeholder: r.placeholder === true,
        withheld: r.withheld === true,
        occurredAt: date(r, 'occurredAt', fail),
        createdAt: date(r, 'createdAt', fail),
      } satisfies ArchivedTurn as LineOf<P>;
    }
    case 'memories':
      // Checked field by field by the memories' own import (parseImport); its dates here, where
      // the line is known, as that import reads any date JavaScript does.
      str(r, 'content', fail, 100_000);
      for (const key of MEMORY_DATES) if (r[key] != null && r[key] !== '') date(r, key, fail);
      return r as unknown as LineOf<P>;
    case 'periodSummaries': {
      const period = r.period;
      if (period !== 'WEEK' && period !== 'MONTH' && period !== 'YEAR') {
        fail('period must be one of WEEK, MONTH, YEAR');
      }
      return {
        id: str(r, 'id', fail, ID_MAX),
        period: period as ArchivedPeriodSummary['period'],
        start: day(r, 'start', fail),
        end: day(r, 'end', fail),
        timeZone: timeZone(r, 'timeZone', fail),
        startsAt: date(r, 'startsAt', fail),
        endsAt: date(r, 'endsAt', fail),
        summary: str(r, 'summary', fail, 100_000),
        emotionalTone: optStr(r, 'emotionalTone', fail, 1000),
        keyThemes: strings(r, 'keyThemes', fail),
        recurringPatterns: strings(r, 'recurringPatterns', fail),
        people: strings(r, 'people', fail),
        places: strings(r, 'places', fail),
        conversationCount: int(r, 'conversationCount', fail),
        turnCount: int(r, 'turnCount', fail),
        conversationIds: strings(r, 'conversationIds', fail, 100_000),
        aggregated: r.aggregated === true,
        model: str(r, 'model', fail, 200),
        promptVersion: optStr(r, 'promptVersion', fail, 200),
        createdAt: date(r, 'createdAt', fail),
        updatedAt: date(r, 'updatedAt', fail),
      } satisfies ArchivedPeriodSummary as LineOf<P>;
    }
  }
  return fail('unknown part');
}

export type LineOf<P extends ArchivePart> = {
  facts: ArchivedFact;
  stories: ArchivedStory;
  conversations: ArchivedConversation;
  turns: ArchivedTurn;
  memories: ArchivedMemory;
  periodSummaries: ArchivedPeriodSummary;
}[P];
