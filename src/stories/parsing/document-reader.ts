import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import pLimit from 'p-limit';
import { DocumentParseError, type ParseLimits, type ParseProblem } from './document.types.js';

/** One text item of a PDF page: its text, baseline (growing upwards), height, line end (1). */
export type PdfItem = [text: string, y: number, height: number, eol: 0 | 1];

export type RawDocument =
  { kind: 'pdf'; pages: PdfItem[][]; titles: string[] } | { kind: 'docx'; html: string };

type WorkerMessage =
  | { type: 'result'; result: RawDocument }
  | { type: 'problem'; problem: ParseProblem; detail: number | null }
  | { type: 'failed'; message: string };

const WORKER_URL = new URL('./document-reader.worker.mjs', import.meta.url);

let resourceDirs: { cMapUrl: string; standardFontDataUrl: string } | null = null;

/**
 * The CMaps (for CJK text) and standard font metrics that ship with pdf.js, read from disk
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

// Each read holds up to maxMemoryMb in its own thread: a burst of uploads waits its turn.
let gate: { concurrency: number; limit: ReturnType<typeof pLimit> } | null = null;

function throttle(concurrency: number): ReturnType<typeof pLimit> {
  if (gate?.concurrency !== concurrency) gate = { concurrency, limit: pLimit(concurrency) };
  return gate.limit;
}

/**
 * Reads a PDF or DOCX in a worker thread held to `limits.maxMemoryMb` of heap and stopped
 * after `limits.timeoutMs`, a few at a time (`limits.concurrency`). Returns the raw text
 * items or HTML; throws a DocumentParseError for a file that cannot be read within the limits.
 */
export function readInWorker(
  format: 'PDF' | 'DOCX',
  bytes: Uint8Array,
  limits: ParseLimits,
): Promise<RawDocument> {
  return throttle(limits.concurrency)(() => run(format, bytes, limits));
}

function run(format: 'PDF' | 'DOCX', bytes: Uint8Array, limits: ParseLimits) {
  if (!existsSync(fileURLToPath(WORKER_URL)))
    throw new Error(
      `The document reader's worker script is missing at ${fileURLToPath(WORKER_URL)}; the build must copy it next to document-reader.js.`,
    );
  // A copy, handed over to the worker: pdf.js takes over (detaches) the buffer it reads.
  const data = new Uint8Array(bytes);
  return new Promise<RawDocument>((resolve, reject) => {
    const worker = new Worker(WORKER_URL, {
      workerData: {
        format,
        bytes: data,
        maxPages: limits.maxPages,
        maxChars: limits.maxChars,
        maxUnzippedBytes: limits.maxUnzippedBytes,
        ...pdfjsResources(),
      },
      transferList: [data.buffer],
      resourceLimits: {
        maxOldGenerationSizeMb: limits.maxMemoryMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(8, limits.maxMemoryMb / 8)),
      },
      // pdf.js reports what it skips in a damaged file on the console: not the server's log.
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      action();
      void worker.terminate();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new DocumentParseError(
              'TOO_COMPLEX',
              `The file took longer than ${Math.round(limits.timeoutMs / 1000)} seconds to read; split it into smaller files or save it again in a simpler form.`,
            ),
          ),
        ),
      limits.timeoutMs,
    );
    worker.on('message', (message: WorkerMessage) =>
      settle(() => {
        if (message.type === 'result') resolve(message.result);
        else if (message.type === 'problem')
          reject(problemError(format, message.problem, message.detail, limits));
        else reject(new Error(`The document reader failed: ${message.message}`));
      }),
    );
    worker.on('error', (err: Error & { code?: string }) =>
      settle(() =>
        reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new DocumentParseError(
                'TOO_COMPLEX',
                `The file needs more than ${limits.maxMemoryMb} MB of memory to read; split it into smaller files or save it again in a simpler form.`,
              )
            : err,
        ),
      ),
    );
    worker.on('exit', (code) =>
      settle(() => reject(new Error(`The document reader stopped (exit code ${code}).`))),
    );
  });
}

function problemError(
  format: 'PDF' | 'DOCX',
  problem: ParseProblem,
  detail: number | null,
  limits: ParseLimits,
): DocumentParseError {
  const pdf = format === 'PDF';
  switch (problem) {
    case 'ENCRYPTED':
      return new DocumentParseError(
        problem,
        'The PDF is password-protected; upload an unprotected copy.',
      );
    case 'TOO_MANY_PAGES':
      return new DocumentParseError(
        problem,
        `The PDF has ${detail} pages; at most ${limits.maxPages} can be uploaded. Split it into smaller files.`,
      );
    case 'TOO_LONG':
      return tooLong(limits.maxChars);
    case 'TOO_COMPLEX':
      return new DocumentParseError(
        problem,
        `The Word document would unpack to ${Math.round((detail ?? 0) / (1024 * 1024))} MB; at most ${Math.round(limits.maxUnzippedBytes / (1024 * 1024))} MB can be read. Save it again without embedded media, or split it.`,
      );
    default:
      return new DocumentParseError(
        'CORRUPT',
        pdf
          ? 'The PDF could not be read: it seems damaged or incomplete. Save or export it again and upload the new copy.'
          : 'The Word document could not be read: it seems damaged or incomplete. Save it again and upload the new copy.',
      );
  }
}

export function tooLong(maxChars: number): DocumentParseError {
  return new DocumentParseError(
    'TOO_LONG',
    `The document has more than ${maxChars.toLocaleString('en-US')} characters of text; split it into smaller files.`,
  );
}
