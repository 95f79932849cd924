import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import type { TextItem, TextMarkedContent } from 'pdfjs-dist/types/src/display/api.js';
import { DocumentParseError, type ParseLimits, type ParsedPage } from './document.types.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

/** Not a literal in `import()`: the worker module has no type declarations. */
const WORKER_MODULE: string = 'pdfjs-dist/legacy/build/pdf.worker.mjs';

let pdfjsLoading: Promise<PdfJs> | null = null;

/**
 * pdf.js's Node build (the "legacy" one, for runtimes without the newest web APIs), loaded on
 * the first PDF only. Node has no web workers, so pdf.js parses in this thread through its
 * "fake worker"; handing it the worker module through `globalThis.pdfjsWorker` makes it use
 * that module rather than import its worker file by a path relative to itself.
 */
function loadPdfJs(): Promise<PdfJs> {
  pdfjsLoading ??= (async () => {
    // The legacy build polyfills JSON.rawJSON by replacing JSON.stringify and JSON.parse, for
    // the whole process, with versions about ten times slower; reading text never needs it.
    const { stringify, parse } = JSON;
    const [pdfjs, worker] = await Promise.all([
      import('pdfjs-dist/legacy/build/pdf.mjs'),
      import(WORKER_MODULE) as Promise<{ WorkerMessageHandler: unknown }>,
    ]).finally(() => {
      JSON.stringify = stringify;
      JSON.parse = parse;
    });
    const global = globalThis as { pdfjsWorker?: { WorkerMessageHandler: unknown } };
    global.pdfjsWorker ??= worker;
    return pdfjs;
  })().catch((err: unknown) => {
    pdfjsLoading = null;
    throw err;
  });
  return pdfjsLoading;
}

let resourceDirs: { cMapUrl: string; standardFontDataUrl: string } | null = null;

/**
 * The CMaps (for CJK text) and standard font metrics that ship in the package, read from disk
 * when a document needs them: pdf.js fetches nothing over the network.
 */
function pdfjsResources(): { cMapUrl: string; standardFontDataUrl: string } {
  if (!resourceDirs) {
    const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
    resourceDirs = {
      cMapUrl: join(root, 'cmaps') + sep,
      standardFontDataUrl: join(root, 'standard_fonts') + sep,
    };
  }
  return resourceDirs;
}

/** Errors pdf.js raises for a document it cannot read (as opposed to a failure of our own). */
const PDF_ERRORS = new Set([
  'InvalidPDFException',
  'FormatError',
  'UnknownErrorException',
  'ResponseException',
  'AbortException',
]);

function problemOf(err: unknown): DocumentParseError | null {
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'PasswordException')
    return new DocumentParseError(
      'ENCRYPTED',
      'The PDF is password-protected; upload an unprotected copy.',
    );
  if (typeof name === 'string' && PDF_ERRORS.has(name))
    return new DocumentParseError(
      'CORRUPT',
      'The PDF could not be read: it seems damaged or incomplete. Save or export it again and upload the new copy.',
    );
  return null;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A PDF's pages, each with its text, and its title from the document's metadata. */
export async function readPdf(
  bytes: Uint8Array,
  limits: ParseLimits,
): Promise<{ pages: ParsedPage[]; title: string | null }> {
  const pdfjs = await loadPdfJs();
  const task = pdfjs.getDocument({
    // A copy: pdf.js takes over (detaches) the buffer it is given, and refuses Node Buffers.
    data: new Uint8Array(bytes),
    ...pdfjsResources(),
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    enableXfa: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  try {
    const doc = await task.promise;
    if (doc.numPages > limits.maxPages)
      throw new DocumentParseError(
        'TOO_MANY_PAGES',
        `The PDF has ${doc.numPages} pages; at most ${limits.maxPages} can be uploaded. Split it into smaller files.`,
      );
    const title = await pdfTitle(doc);
    const pages: ParsedPage[] = [];
    for (let number = 1; number <= doc.numPages; number++) {
      // One page at a time, with a turn of the event loop in between: pdf.js parses in this
      // thread, and a long document must not hold up the requests being served meanwhile.
      await yieldToEventLoop();
      const page = await doc.getPage(number);
      try {
        const content = await page.getTextContent();
        pages.push({ number, text: pageText(content.items) });
      } finally {
        page.cleanup();
      }
    }
    return { pages, title };
  } catch (err) {
    throw problemOf(err) ?? err;
  } finally {
    await task.destroy();
  }
}

async function pdfTitle(doc: Awaited<ReturnType<PdfJs['getDocument']>['promise']>) {
  try {
    const { info, metadata } = await doc.getMetadata();
    const fromXmp = metadata?.get('dc:title');
    const fromInfo = (info as { Title?: unknown } | null)?.Title;
    for (const candidate of [fromXmp, fromInfo]) {
      if (typeof candidate !== 'string') continue;
      const title = cleanTitle(candidate);
      if (title) return title;
    }
  } catch {
    // A title is a nicety: a document whose metadata cannot be read is read all the same.
  }
  return null;
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
function pageText(items: (TextItem | TextMarkedContent)[]): string {
  const lines: Line[] = [];
  let current: Line | null = null;
  for (const item of items) {
    if (!('str' in item)) continue;
    const y = Number(item.transform[5]);
    const height = item.height || Math.hypot(Number(item.transform[2]), Number(item.transform[3]));
    if (item.str) {
      // Text on another line without an end-of-line mark before it.
      if (current && Math.abs(current.y - y) > Math.max(current.height, height) / 2) {
        addLine(lines, current);
        current = null;
      }
      current ??= { text: '', y, height };
      current.text += item.str;
      current.height = Math.max(current.height, height);
    }
    if (item.hasEOL && current) {
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
