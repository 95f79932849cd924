import { DocumentParseError, type DocumentFormat } from './document.types.js';

export const UNSUPPORTED_HINT = 'Only plain text, Markdown, PDF and DOCX files can be uploaded';

/**
 * The allow list of what Keepsake keeps, by the ending of a file's name: a name with no ending
 * is read by its content; any other ending is refused, whatever the file holds (an .svg or an
 * .html is text a browser runs). The first ending of each format is the one a kept file is
 * saved under when its own name does not end as its format does (storedFileName).
 */
export const FORMAT_ENDINGS: Record<DocumentFormat, readonly string[]> = {
  TEXT: ['txt', 'text'],
  MARKDOWN: ['md', 'markdown', 'mdown', 'mkd', 'mkdn'],
  PDF: ['pdf'],
  DOCX: ['docx'],
};
const ENDINGS = new Set(Object.values(FORMAT_ENDINGS).flat());

/**
 * The types a client may claim for a file read as text: a browser sends the type its system
 * knows for the ending, application/octet-stream or nothing. Any other claim (text/html,
 * image/svg+xml, an XML or script type) is refused. A PDF or DOCX is told by its content, and
 * whatever type is claimed for it is not used.
 */
const TEXT_TYPES = new Set([
  '',
  'text/plain',
  'text/markdown',
  'text/x-markdown',
  'text/x-web-markdown',
  'application/x-markdown',
  'application/octet-stream',
]);

/** Refused endings people meet most, said plainly. */
const LOOKS_LIKE: Record<string, string> = {
  htm: 'a web page (HTML). Save it as text or PDF and upload that',
  html: 'a web page (HTML). Save it as text or PDF and upload that',
  xhtml: 'a web page (HTML). Save it as text or PDF and upload that',
  shtml: 'a web page (HTML). Save it as text or PDF and upload that',
  svg: 'an SVG image, which can hold a program',
  xml: 'an XML file',
  js: 'a program',
  mjs: 'a program',
  rtf: 'an RTF document; save it as DOCX or PDF and upload that',
  doc: 'an old-style Word (.doc) file; save it as DOCX or PDF and upload that',
};

export function extensionOf(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

export function mediaType(mimeType: string | null): string {
  return mimeType?.split(';')[0].trim().toLowerCase() ?? '';
}

/**
 * The allow list: the file's name, and for a file read as text (`text`) the type its sender
 * claims.
 */
export function checkFileType(fileName: string, mimeType: string | null, text: boolean): void {
  const ending = extensionOf(fileName);
  if (ending && !ENDINGS.has(ending)) {
    throw new DocumentParseError(
      'UNSUPPORTED',
      `${UNSUPPORTED_HINT} (names ending in .txt, .md, .pdf or .docx); this one ends in .${ending}${LOOKS_LIKE[ending] ? `: ${LOOKS_LIKE[ending]}` : ''}.`,
    );
  }
  const type = mediaType(mimeType);
  if (text && !TEXT_TYPES.has(type)) {
    throw new DocumentParseError(
      'UNSUPPORTED',
      type === 'text/html' || type === 'application/xhtml+xml'
        ? `${UNSUPPORTED_HINT}; this looks like a web page (HTML). Save it as text or PDF and upload that.`
        : `${UNSUPPORTED_HINT}; this one is sent as ${type.slice(0, 100)}.`,
    );
  }
}
