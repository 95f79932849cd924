import type { Readable } from 'node:stream';
import yauzl, { Entry, ZipFile } from 'yauzl';
import { ArchiveErrorCode, ArchiveException } from './archive.exception.js';
import {
  ArchiveManifest,
  ArchivePart,
  MANIFEST_PATH,
  PART_PATHS,
  PARTS,
  parseManifest,
} from './archive-format.js';

export interface ReaderLimits {
  /** Files the ZIP may hold. */
  maxEntries: number;
  /** Bytes its entries may unpack to, together. */
  maxUnzippedBytes: number;
  /** Bytes one original file may have (DOCUMENT_MAX_BYTES). */
  maxFileBytes: number;
  /** Bytes one line of a part may have. */
  maxLineBytes: number;
}

const MANIFEST_MAX_BYTES = 4 * 1024 * 1024;

function tooLarge(message: string): ArchiveException {
  return new ArchiveException(ArchiveErrorCode.TOO_LARGE, message, 'file');
}

/** A name that could reach outside the folder it is unpacked in. */
function unsafeName(name: string): boolean {
  return (
    name.startsWith('/') ||
    /^[a-zA-Z]:/.test(name) ||
    name.split('/').some((segment) => segment === '..')
  );
}

/**
 * An uploaded legacy archive opened for reading, by random access (yauzl reads the ZIP's
 * central directory; nothing is unpacked until asked for). Opening checks it whole before a
 * byte of it is imported: a ZIP, within ARCHIVE_IMPORT_MAX_ENTRIES files that together declare
 * at most ARCHIVE_IMPORT_MAX_UNZIPPED_BYTES, no name that climbs out of its folder, no
 * encrypted entry, a keepsake.json of a format and version this Keepsake reads, every part it
 * names present. Reading then holds each entry to what it declared (yauzl's validateEntrySizes:
 * a ZIP bomb that lies about its sizes fails there) and each line to maxLineBytes.
 */
export class ArchiveReader {
  private constructor(
    private readonly zip: ZipFile,
    private readonly entries: Map<string, Entry>,
    readonly manifest: ArchiveManifest,
    /** Bytes of the files under stories/ but their pages, as declared. */
    readonly storyBytes: number,
    private readonly limits: ReaderLimits,
  ) {}

  static async open(path: string, limits: ReaderLimits): Promise<ArchiveReader> {
    let zip: ZipFile;
    try {
      zip = await yauzl.openPromise(path, {
        lazyEntries: true,
        autoClose: false,
        validateEntrySizes: true,
        strictFileNames: true,
        decodeStrings: true,
      });
    } catch (err) {
      throw Object.assign(
        ArchiveException.invalid('The file is not a ZIP archive, or it is damaged.'),
        { cause: err },
      );
    }
    try {
      if (zip.entryCount > limits.maxEntries) {
        throw tooLarge(
          `The archive holds ${zip.entryCount} files; at most ${limits.maxEntries} are accepted (ARCHIVE_IMPORT_MAX_ENTRIES).`,
        );
      }
      const entries = new Map<string, Entry>();
      let unzipped = 0;
      let storyBytes = 0;
      for await (const entry of eachEntry(zip)) {
        const name = entry.fileName;
        if (unsafeName(name)) {
          throw ArchiveException.invalid(`The archive names a file outside itself: ${name}.`);
        }
        if (entry.isEncrypted()) {
          throw ArchiveException.invalid(`The archive's file ${name} is encrypted.`);
        }
        unzipped += entry.uncompressedSize;
        if (unzipped > limits.maxUnzippedBytes) {
          throw tooLarge(
            `The archive unpacks to more than ${limits.maxUnzippedBytes} bytes (ARCHIVE_IMPORT_MAX_UNZIPPED_BYTES).`,
          );
        }
        if (name.startsWith('stories/') && !name.endsWith('.html') && !name.endsWith('/')) {
          if (entry.uncompressedSize > limits.maxFileBytes) {
            throw tooLarge(
              `The archive's file ${name} has ${entry.uncompressedSize} bytes; a story's file has at most ${limits.maxFileBytes} (DOCUMENT_MAX_BYTES).`,
            );
          }
          storyBytes += entry.uncompressedSize;
        }
        entries.set(name, entry);
      }
      const manifestEntry = entries.get(MANIFEST_PATH);
      if (!manifestEntry) {
        throw new ArchiveException(
          ArchiveErrorCode.UNSUPPORTED_ARCHIVE,
          `This ZIP is not a Keepsake legacy archive: it has no ${MANIFEST_PATH}.`,
          'file',
        );
      }
      if (manifestEntry.uncompressedSize > MANIFEST_MAX_BYTES) {
        throw tooLarge(`${MANIFEST_PATH} is larger than ${MANIFEST_MAX_BYTES} bytes.`);
      }
      const manifest = parseManifest(
        (await readAll(await openEntry(zip, manifestEntry), MANIFEST_MAX_BYTES)).toString('utf8'),
      );
      for (const part of PARTS) {
        if (!entries.has(PART_PATHS[part])) {
          throw ArchiveException.invalid(`The archive has no ${PART_PATHS[part]}.`);
        }
      }
      return new ArchiveReader(zip, entries, manifest, storyBytes, limits);
    } catch (err) {
      zip.close();
      throw err;
    }
  }

  close(): void {
    this.zip.close();
  }

  /** The bytes a file of the archive declares it unpacks to (held to it as it is read). */
  declaredSize(name: string): number {
    return this.entries.get(name)?.uncompressedSize ?? 0;
  }

  /** An original file's bytes (bounded by DOCUMENT_MAX_BYTES). */
  async file(name: string): Promise<Buffer> {
    const entry = this.entries.get(name);
    if (!entry) throw ArchiveException.invalid(`The archive has no ${name}.`);
    return readAll(await openEntry(this.zip, entry), this.limits.maxFileBytes);
  }

  /**
   * The lines of a part, from line `skip + 1` on, each with its number (1-based), held to what
   * keepsake.json declares as they are unpacked: a line past its count fails there, before
   * another byte is read, and a part that ends short fails at its end. Blank lines (only
   * spaces, tabs or carriage returns; Keepsake writes none) count against BLANK_LINES_MAX and
   * are never buffered, a blank line past BLANK_LINE_MAX_BYTES is refused, and any line past
   * maxLineBytes is refused as soon as it is that long: one line at a time is held, never more.
   * Lines before `skip` are counted, not decoded (an import going on from its cursor).
   */
  async *lines(part: ArchivePart, skip = 0): AsyncGenerator<{ line: number; text: string }> {
    const path = PART_PATHS[part];
    const declared = this.manifest.parts[part].count;
    const max = this.limits.maxLineBytes;
    const stream = await openEntry(this.zip, this.entries.get(path)!);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let blank = true;
    let line = 0;
    let items = 0;
    let blanks = 0;
    const finish = (): { line: number; text: string } | null => {
      const wasBlank = blank;
      const held = pending;
      pending = [];
      pendingBytes = 0;
      blank = true;
      if (wasBlank) {
        if (++blanks > BLANK_LINES_MAX) {
          throw ArchiveException.invalid(
            `${path} has more than ${BLANK_LINES_MAX} blank lines (line ${line} is one more): an archive holds one item on each line, and Keepsake writes no blank line.`,
          );
        }
        return null;
      }
      if (++items > declared) {
        throw ArchiveException.invalid(
          `${path}, line ${line}: keepsake.json declares ${plural(declared, 'line')} for this part; this is one more.`,
        );
      }
      if (line <= skip) return null;
      try {
        return { line, text: UTF8.decode(Buffer.concat(held)) };
      } catch {
        throw ArchiveException.invalid(`${path}, line ${line}: not UTF-8 text`);
      }
    };
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        let start = 0;
        for (;;) {
          const newline = chunk.indexOf(10, start);
          const end = newline === -1 ? chunk.length : newline;
          if (blank) blank = onlySpace(chunk, start, end);
          pendingBytes += end - start;
          if (pendingBytes > max) {
            throw tooLarge(
              `${path}, line ${line + 1}, is longer than ${max} bytes, the longest line an archive may hold.`,
            );
          }
          if (blank && pendingBytes > BLANK_LINE_MAX_BYTES) {
            throw ArchiveException.invalid(
              `${path}, line ${line + 1}: more than ${BLANK_LINE_MAX_BYTES} bytes of blank space.`,
            );
          }
          // A blank line, or one before `skip`, is counted and measured, never held.
          if (!blank && line + 1 > skip) pending.push(chunk.subarray(start, end));
          if (newline === -1) break;
          line++;
          const done = finish();
          if (done) yield done;
          start = newline + 1;
        }
      }
      // After the last newline: a line without one, or nothing (blank space there is not a line).
      if (!blank) {
        line++;
        const done = finish();
        if (done) yield done;
      }
    } catch (err) {
      if (err instanceof ArchiveException) throw err;
      throw damaged(`${path} cannot be unpacked`, err);
    } finally {
      stream.destroy();
    }
    if (items < declared) {
      throw ArchiveException.invalid(
        `${path} holds ${plural(items, 'line')}; keepsake.json declares ${declared}.`,
      );
    }
  }
}

/** Blank lines a part may hold in all; Keepsake writes none, a hand-edited file a few. */
export const BLANK_LINES_MAX = 100;
/** Bytes of spaces one blank line may hold. */
export const BLANK_LINE_MAX_BYTES = 1024;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Only the spaces JSON allows between values (a line's end is cut before its newline). */
function onlySpace(chunk: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = chunk[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/**
 * The archive's bytes could not be unpacked (zlib or yauzl said why, in words of their own):
 * the family reads Keepsake's sentence, the operator's log the library's (`cause`).
 */
function damaged(what: string, cause: unknown): ArchiveException {
  return Object.assign(
    ArchiveException.invalid(
      `${what}: the archive is damaged, or one of its files unpacks to more than it declares.`,
    ),
    { cause },
  );
}

async function* eachEntry(zip: ZipFile): AsyncGenerator<Entry> {
  for (;;) {
    const next = new Promise<Entry | null>((resolve, reject) => {
      const onEntry = (entry: Entry) => {
        cleanup();
        resolve(entry);
      };
      const onEnd = () => {
        cleanup();
        resolve(null);
      };
      const onError = (err: Error) => {
        cleanup();
        reject(damaged('The archive cannot be read', err));
      };
      const cleanup = () => {
        zip.off('entry', onEntry);
        zip.off('end', onEnd);
        zip.off('error', onError);
      };
      zip.on('entry', onEntry);
      zip.on('end', onEnd);
      zip.on('error', onError);
    });
    zip.readEntry();
    const entry = await next;
    if (!entry) return;
    yield entry;
  }
}

async function openEntry(zip: ZipFile, entry: Entry): Promise<Readable> {
  try {
    return await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw damaged(`The archive's file ${entry.fileName} cannot be read`, err);
  }
}

async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw tooLarge(`A file of the archive unpacks to more than ${max} bytes.`);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof ArchiveException) throw err;
    throw damaged('A file of the archive cannot be unpacked', err);
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks);
}
