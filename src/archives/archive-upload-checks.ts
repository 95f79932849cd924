import { ArchiveErrorCode, ArchiveException } from './archive.exception.js';
import { PART_PATHS, PARTS, parseLine } from './archive-format.js';
import type { AppConfig } from '../config/app-config.js';
import type { ArchiveReader, ReaderLimits } from './archive-reader.js';

type Env = AppConfig['env'];

/** How far reading an archive goes: its files, their sizes, a line. */
export function readerLimits(env: Env): ReaderLimits {
  return {
    maxEntries: env.ARCHIVE_IMPORT_MAX_ENTRIES,
    maxUnzippedBytes: env.ARCHIVE_IMPORT_MAX_UNZIPPED_BYTES,
    maxFileBytes: env.DOCUMENT_MAX_BYTES,
    // A story's text (DOCUMENT_MAX_CHARS, up to 4 bytes each) with its fields.
    maxLineBytes: env.DOCUMENT_MAX_CHARS * 4 + 1024 * 1024,
  };
}

/** What an upload is held to before it is kept: the limits an import would meet. */
export function uploadLimits(env: Env): UploadLimits {
  return {
    conversationsPerDay: env.CONVERSATIONS_PER_USER_PER_DAY,
    turnsPerConversation: env.IMPORT_MAX_MESSAGES,
    line: { maxMessageChars: env.MESSAGE_MAX_LENGTH, maxStoryChars: env.DOCUMENT_MAX_CHARS },
  };
}

export interface UploadLimits {
  /** CONVERSATIONS_PER_USER_PER_DAY: an archive of more could never be imported. */
  conversationsPerDay: number;
  /** IMPORT_MAX_MESSAGES: the turns of one imported conversation. */
  turnsPerConversation: number;
  line: { maxMessageChars: number; maxStoryChars: number };
}

/** The fewest bytes a line takes: `{}` and its newline. */
const MIN_LINE_BYTES = 3;

/**
 * What can be known of an uploaded archive before its import, checked at upload so that it is
 * refused there rather than failing later: each part's declared line count fits in its bytes;
 * it holds no more conversations than its importer may import in a day, each of at most
 * IMPORT_MAX_MESSAGES turns as data/conversations.jsonl declares them (that part is read whole
 * here, every line checked: it is at most a day's conversations). The import holds the same
 * lines again as it writes them, whatever was declared.
 */
export async function checkUpload(reader: ArchiveReader, limits: UploadLimits): Promise<void> {
  const parts = reader.manifest.parts;
  for (const part of PARTS) {
    const { count } = parts[part];
    const size = reader.declaredSize(PART_PATHS[part]);
    if (count > 0 && count * MIN_LINE_BYTES - 1 > size) {
      throw ArchiveException.invalid(
        `keepsake.json declares ${count} lines for ${PART_PATHS[part]}, which holds ${size} bytes: too few for so many lines.`,
      );
    }
  }
  const conversations = parts.conversations.count;
  if (conversations > limits.conversationsPerDay) {
    throw new ArchiveException(
      ArchiveErrorCode.TOO_LARGE,
      `The archive holds ${conversations} conversations; a member can start or import at most ${limits.conversationsPerDay} a day (CONVERSATIONS_PER_USER_PER_DAY), so it cannot be imported here.`,
      'file',
    );
  }
  for await (const { line, text } of reader.lines('conversations')) {
    const conversation = parseLine('conversations', text, line, limits.line);
    if (conversation.turnCount > limits.turnsPerConversation) {
      throw new ArchiveException(
        ArchiveErrorCode.TOO_LARGE,
        `${PART_PATHS.conversations}, line ${line}: the conversation has ${conversation.turnCount} turns; an imported conversation holds at most ${limits.turnsPerConversation} (IMPORT_MAX_MESSAGES).`,
        'file',
      );
    }
  }
}
