export type DocumentFormat = 'TEXT' | 'MARKDOWN' | 'PDF' | 'DOCX';

/** The text of one page; pages are numbered from 1. DOCX, text and Markdown have one page. */
export interface ParsedPage {
  number: number;
  text: string;
}

export interface ParsedDocument {
  format: DocumentFormat;
  /** Every page of the document, in order, empty ones included (their text is ''). */
  pages: ParsedPage[];
  title: string | null;
}

export type ParseProblem =
  | 'UNSUPPORTED'
  | 'ENCRYPTED'
  | 'CORRUPT'
  | 'TOO_LARGE'
  | 'TOO_MANY_PAGES'
  | 'TOO_LONG'
  | 'TOO_COMPLEX'
  | 'EMPTY';

/** A file that cannot be read; the message is written for the person who uploaded it. */
export class DocumentParseError extends Error {
  constructor(
    readonly problem: ParseProblem,
    message: string,
  ) {
    super(message);
    this.name = 'DocumentParseError';
  }
}

export interface ParseLimits {
  maxBytes: number;
  maxPages: number;
  /** Characters of text a document may hold. */
  maxChars: number;
  /** Bytes a DOCX may declare it unpacks to. */
  maxUnzippedBytes: number;
  /** Heap of the thread a PDF or DOCX is read in, and how long it may take. */
  maxMemoryMb: number;
  timeoutMs: number;
  /** PDFs and DOCX files read at the same time; the others wait. */
  concurrency: number;
}
