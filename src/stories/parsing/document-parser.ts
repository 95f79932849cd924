import { readInWorker, tooLong } from './document-reader.js';
import { docxText } from './docx-text.js';
import {
  DocumentParseError,
  type DocumentFormat,
  type ParseLimits,
  type ParsedDocument,
} from './document.types.js';
import { sniffFile } from './file-kind.js';
import { checkFileType, extensionOf, mediaType, UNSUPPORTED_HINT } from './file-types.js';
import { markdownTitle } from './markdown.js';
import { pdfPages } from './pdf-text.js';

export {
  DocumentParseError,
  type DocumentFormat,
  type ParseLimits,
  type ParsedDocument,
  type ParsedPage,
  type ParseProblem,
} from './document.types.js';

const MARKDOWN_EXTENSIONS = new Set(['md', 'markdown', 'mdown', 'mkd', 'mkdn']);
const MARKDOWN_TYPES = new Set(['text/markdown', 'text/x-markdown']);

/**
 * Reads an uploaded document into pages of text. The format is told by the content first (a
 * PDF or a DOCX whatever its name), then by the name or type for text, which must be UTF-8.
 * PDF and DOCX are read in a worker thread held to the limits' memory and time.
 * Throws a DocumentParseError, whose message is written for the person who uploaded the file,
 * for a file that cannot be read; other errors are failures of our own.
 */
export async function parseDocument(
  bytes: Uint8Array,
  fileName: string,
  mimeType: string | null,
  limits: ParseLimits,
): Promise<ParsedDocument> {
  if (bytes.byteLength > limits.maxBytes)
    throw new DocumentParseError(
      'TOO_LARGE',
      `The file is ${formatBytes(bytes.byteLength)}; files of up to ${formatBytes(limits.maxBytes)} can be uploaded.`,
    );
  const sniffed = sniffFile(bytes);
  // What the content says first (this is a photo), then the allow list of names and types.
  if (sniffed.kind !== 'OTHER') checkFileType(fileName, mimeType, sniffed.kind === 'UNKNOWN');
  switch (sniffed.kind) {
    case 'PDF': {
      const raw = await readInWorker('PDF', bytes, limits);
      if (raw.kind !== 'pdf') throw new Error('The document reader returned no PDF pages.');
      const { pages, title } = await pdfPages(raw.pages, raw.titles);
      if (!pages.some((page) => /\S/.test(page.text)))
        throw new DocumentParseError(
          'EMPTY',
          'No text could be read from this PDF. Scanned pages are pictures of text and are not read; upload a PDF with selectable text, or the text itself.',
        );
      return { format: 'PDF', pages, title };
    }
    case 'DOCX': {
      const raw = await readInWorker('DOCX', bytes, limits);
      if (raw.kind !== 'docx') throw new Error('The document reader returned no DOCX text.');
      const text = await docxText(raw.html);
      if (text.length > limits.maxChars) throw tooLong(limits.maxChars);
      return singlePage('DOCX', text);
    }
    case 'OTHER':
      throw new DocumentParseError(
        'UNSUPPORTED',
        `${UNSUPPORTED_HINT}; this looks like ${sniffed.description}.`,
      );
    case 'UNKNOWN': {
      const text = decodeText(bytes);
      if (text.length > limits.maxChars) throw tooLong(limits.maxChars);
      return singlePage(textFormat(fileName, mimeType), text);
    }
  }
}

function singlePage(format: DocumentFormat, text: string): ParsedDocument {
  if (!/\S/.test(text))
    throw new DocumentParseError(
      'EMPTY',
      format === 'DOCX' ? 'The Word document has no text.' : 'The file has no text.',
    );
  return { format, pages: [{ number: 1, text }], title: markdownTitle(text) };
}

function textFormat(fileName: string, mimeType: string | null): 'TEXT' | 'MARKDOWN' {
  return MARKDOWN_EXTENSIONS.has(extensionOf(fileName)) || MARKDOWN_TYPES.has(mediaType(mimeType))
    ? 'MARKDOWN'
    : 'TEXT';
}

const TEXT_FORMATS = new Set<DocumentFormat>(['TEXT', 'MARKDOWN']);

/**
 * The type checks of an upload for a file that comes with its format and text already read (a
 * legacy archive's original): its name and claimed type on the allow list, and its content
 * what its format says (a PDF is a PDF, a DOCX a DOCX, a text UTF-8 text and not a picture or
 * a program). Throws DocumentParseError, as parseDocument does.
 */
export function checkKeptFile(
  bytes: Uint8Array,
  fileName: string | null,
  mimeType: string | null,
  format: DocumentFormat,
): void {
  const sniffed = sniffFile(bytes);
  if (sniffed.kind === 'OTHER')
    throw new DocumentParseError(
      'UNSUPPORTED',
      `${UNSUPPORTED_HINT}; this looks like ${sniffed.description}.`,
    );
  checkFileType(fileName ?? '', mimeType, sniffed.kind === 'UNKNOWN');
  const actual: DocumentFormat = sniffed.kind === 'UNKNOWN' ? 'TEXT' : sniffed.kind;
  if (actual === 'TEXT') decodeText(bytes);
  if (actual !== format && !(TEXT_FORMATS.has(actual) && TEXT_FORMATS.has(format)))
    throw new DocumentParseError(
      'UNSUPPORTED',
      `The file is ${actual === 'TEXT' ? 'text' : `a ${actual}`}, not the ${format} its story says.`,
    );
}

/** Control characters that do not occur in text (tab, line breaks and form feed do). */
// eslint-disable-next-line no-control-regex
const BINARY = /[\u0000-\u0008\u000e-\u001f\u007f]/g;

/** UTF-8 text with its line endings made `\n`; anything else is refused. */
function decodeText(bytes: Uint8Array): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    throw new DocumentParseError(
      'UNSUPPORTED',
      `${UNSUPPORTED_HINT}, and text must be UTF-8; this file is UTF-16 text. Save it as UTF-8 and upload it again.`,
    );
  let text: string;
  try {
    // Fatal: an invalid byte refuses the file rather than becoming "�"; a BOM is dropped.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DocumentParseError(
      'UNSUPPORTED',
      `${UNSUPPORTED_HINT}; this file is not UTF-8 text. If it is text, save it as UTF-8 and upload it again.`,
    );
  }
  // NUL and other control characters: a binary file whose bytes happen to be valid UTF-8.
  const controls = text.match(BINARY)?.length ?? 0;
  if (text.includes('\u0000') || controls > Math.max(8, text.length / 1000))
    throw new DocumentParseError(
      'UNSUPPORTED',
      `${UNSUPPORTED_HINT}; this file is not text (it looks like a binary file).`,
    );
  return text.replace(/\r\n?/g, '\n').replace(BINARY, '');
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${trimNumber(bytes / 1024)} KB`;
  return `${trimNumber(bytes / (1024 * 1024))} MB`;
}

function trimNumber(value: number): string {
  return value >= 100 ? String(Math.round(value)) : String(Math.round(value * 10) / 10);
}
