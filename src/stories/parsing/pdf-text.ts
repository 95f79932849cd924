import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { ParsedPage } from './document.types.js';
import type { PdfItem } from './document-reader.js';

/** The pages of a PDF as read in the worker, each turned into text; its title from metadata. */
export async function pdfPages(
  raw: PdfItem[][],
  titles: string[],
): Promise<{ pages: ParsedPage[]; title: string | null }> {
  const pages: ParsedPage[] = [];
  for (const [i, items] of raw.entries()) {
    // A page at a time, with a turn of the event loop in between.
    if (i > 0) await yieldToLoop();
    pages.push({ number: i + 1, text: pageText(items) });
  }
  let title: string | null = null;
  for (const candidate of titles) {
    title = cleanTitle(candidate);
    if (title) break;
  }
  return { pages, title };
}

/** Word's exported PDFs are titled "Microsoft Word - Letter.docx"; keep "Letter". */
function cleanTitle(raw: string): string | null {
  const title = raw
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^Microsoft Word - /i, '')
    .replace(/\.(docx?|pdf|txt)$/i, '')
    .trim();
  return title && !/^untitled$/i.test(title) ? title : null;
}

interface Line {
  text: string;
  /** Baseline of the line's first piece of text, in PDF units (growing upwards). */
  y: number;
  height: number;
}

/** Control characters broken fonts map glyphs to; tabs and line breaks are kept. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

function addLine(lines: Line[], line: Line): void {
  const text = line.text
    .replace(CONTROL, '')
    .replace(/[ \t]+/g, ' ')
    .trim();
  if (text) lines.push({ ...line, text });
}

/**
 * The text of a page from pdf.js's text items: items are joined as they come (pdf.js already
 * adds the spaces between words), a line ends where pdf.js marks an end of line (or where the
 * text moves to another line without one), and lines further apart than the page's usual line
 * spacing are separate blocks, with a blank line between them.
 */
function pageText(items: PdfItem[]): string {
  const lines: Line[] = [];
  let current: Line | null = null;
  for (const [str, y, height, eol] of items) {
    if (str) {
      // Text on another line without an end-of-line mark before it.
      if (current && Math.abs(current.y - y) > Math.max(current.height, height) / 2) {
        addLine(lines, current);
        current = null;
      }
      current ??= { text: '', y, height };
      current.text += str;
      current.height = Math.max(current.height, height);
    }
    if (eol && current) {
      addLine(lines, current);
      current = null;
    }
  }
  if (current) addLine(lines, current);
  if (lines.length === 0) return '';

  // The page's usual distance between lines: a low quantile, so that paragraph gaps and
  // headings do not count.
  const advances = lines
    .slice(1)
    .map((line, i) => lines[i].y - line.y)
    .filter((dy) => dy > 0)
    .sort((a, b) => a - b);
  const usual = advances.length ? advances[Math.floor((advances.length - 1) / 4)] : 0;

  let text = lines[0].text;
  for (let i = 1; i < lines.length; i++) {
    const dy = lines[i - 1].y - lines[i].y;
    const height = Math.max(lines[i - 1].height, lines[i].height);
    // Upwards is a new column or box; downwards, a gap wider than a line is a new block.
    const block = dy < -height / 2 || dy > Math.max(1.5 * height, 1.3 * usual);
    text += (block ? '\n\n' : '\n') + lines[i].text;
  }
  return text;
}
