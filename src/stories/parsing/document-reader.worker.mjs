// Reads a PDF (pdf.js) or a DOCX (mammoth) in a worker thread with bounded memory, so that a
// hostile or merely enormous file costs this thread, never the server's event loop; the parent
// stops it after a time limit. Plain JavaScript so the same file runs from src/ under Jest and
// from dist/ after the build. It sends back raw material (text items, HTML); the parent turns
// that into pages of text.
import { parentPort, workerData } from 'node:worker_threads';

const { format, bytes, maxPages, maxChars, maxUnzippedBytes, cMapUrl, standardFontDataUrl } =
  workerData;

/** A problem with the file itself, as opposed to a failure of the reader. */
class Problem extends Error {
  constructor(problem, detail) {
    super(problem);
    this.problem = problem;
    this.detail = detail;
  }
}

// Errors pdf.js raises for a document it cannot read.
const PDF_ERRORS = new Set([
  'InvalidPDFException',
  'FormatError',
  'UnknownErrorException',
  'ResponseException',
  'AbortException',
]);

async function readPdf() {
  // Node has no web workers: pdf.js parses in this thread through its "fake worker", which
  // takes the worker module from `globalThis.pdfjsWorker` rather than importing it by path.
  const [pdfjs, worker] = await Promise.all([
    import('pdfjs-dist/legacy/build/pdf.mjs'),
    import('pdfjs-dist/legacy/build/pdf.worker.mjs'),
  ]);
  globalThis.pdfjsWorker = worker;
  const task = pdfjs.getDocument({
    data: bytes,
    cMapUrl,
    standardFontDataUrl,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    enableXfa: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  try {
    let doc;
    try {
      doc = await task.promise;
    } catch (err) {
      if (err?.name === 'PasswordException') throw new Problem('ENCRYPTED');
      throw err;
    }
    if (doc.numPages > maxPages) throw new Problem('TOO_MANY_PAGES', doc.numPages);
    const titles = await pdfTitles(doc);
    const pages = [];
    let chars = 0;
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await doc.getPage(number);
      try {
        const content = await page.getTextContent();
        // Only what the parent needs of each item: its text, baseline, height and line end.
        const items = [];
        for (const item of content.items) {
          if (!('str' in item)) continue;
          chars += item.str.length;
          items.push([
            item.str,
            Number(item.transform[5]),
            item.height || Math.hypot(Number(item.transform[2]), Number(item.transform[3])),
            item.hasEOL ? 1 : 0,
          ]);
        }
        if (chars > maxChars) throw new Problem('TOO_LONG', chars);
        pages.push(items);
      } finally {
        page.cleanup();
      }
    }
    return { kind: 'pdf', pages, titles };
  } catch (err) {
    if (!(err instanceof Problem) && PDF_ERRORS.has(err?.name)) throw new Problem('CORRUPT');
    throw err;
  } finally {
    await task.destroy();
  }
}

async function pdfTitles(doc) {
  try {
    const { info, metadata } = await doc.getMetadata();
    return [metadata?.get('dc:title'), info?.Title].filter((t) => typeof t === 'string');
  } catch {
    // A title is a nicety: a document whose metadata cannot be read is read all the same.
    return [];
  }
}

async function readDocx() {
  const { unzipSync } = await import('fflate');
  // The sizes the archive declares, read from its directory without inflating anything: a
  // small file that would unpack to gigabytes (a zip bomb) is refused before mammoth opens it.
  let declared = 0;
  try {
    unzipSync(bytes, {
      filter(file) {
        declared += file.originalSize;
        return false;
      },
    });
  } catch {
    throw new Problem('CORRUPT');
  }
  if (declared > maxUnzippedBytes) throw new Problem('TOO_COMPLEX', declared);
  const { default: mammoth } = await import('mammoth');
  let html;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        // Word's title styles become headings too (mammoth's default map has Heading 1-6 only).
        styleMap: ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"],
        // Images are left out: no data URIs of every picture in the letter.
        convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
        externalFileAccess: false,
      },
    );
    html = result.value;
  } catch {
    throw new Problem('CORRUPT');
  }
  // Markup takes room too; the parent measures the text itself against the limit.
  if (html.length > maxChars * 4) throw new Problem('TOO_LONG', html.length);
  return { kind: 'docx', html };
}

try {
  const result = format === 'PDF' ? await readPdf() : await readDocx();
  parentPort.postMessage({ type: 'result', result });
} catch (err) {
  if (err instanceof Problem) {
    parentPort.postMessage({ type: 'problem', problem: err.problem, detail: err.detail ?? null });
  } else {
    parentPort.postMessage({ type: 'failed', message: String(err?.stack ?? err) });
  }
}
