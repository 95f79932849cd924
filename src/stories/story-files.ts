import { checkKeptFile, DocumentParseError } from './parsing/document-parser.js';
import { extensionOf, FORMAT_ENDINGS } from './parsing/file-types.js';
import { StoryFormat } from './story.enums.js';
import { StoryErrorCode, StoryException } from './story.exception.js';

/**
 * A story's original file on its way out and in: the name it is saved under wherever it leaves
 * Keepsake (a download, a legacy archive), and the checks one brought in by an archive passes.
 */

/** A file name safe inside a ZIP and on any disk: no folders, no control characters, not hidden. */
export function safeFileName(name: string, fallback: string): string {
  const cleaned = name
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 120);
  return cleaned || fallback;
}

/**
 * The name an original is saved under: the one it was uploaded with when that ends as its
 * format does, otherwise with its format's ending added. A file kept before uploads had an
 * allow list, under a name a browser would run (page.html, drawing.svg), is saved as
 * page.html.txt and opens as the text it was kept as.
 */
export function savedFileName(fileName: string | null, title: string, format: StoryFormat): string {
  const endings = FORMAT_ENDINGS[format];
  const name = safeFileName(fileName ?? '', safeFileName(title, 'original'));
  return endings.includes(extensionOf(name)) ? name : `${name}.${endings[0]}`;
}

/** An archive's original passes the type checks an upload does (UNREADABLE_DOCUMENT if not). */
export function checkArchivedFile(
  story: { title: string; fileName: string | null; mimeType?: string | null; format: StoryFormat },
  bytes: Uint8Array,
): void {
  try {
    checkKeptFile(bytes, story.fileName, story.mimeType ?? null, story.format);
  } catch (err) {
    if (!(err instanceof DocumentParseError)) throw err;
    throw new StoryException(
      StoryErrorCode.UNREADABLE_DOCUMENT,
      `the original file of "${story.title.slice(0, 100)}"${story.fileName ? ` (${safeFileName(story.fileName, '')})` : ''} is not kept: ${err.message}`,
      'file',
    );
  }
}
