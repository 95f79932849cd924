import { countTokens } from '../llm/tokenizer.js';
import { chunkMessage } from '../search/chunker.js';
import type { ParsedPage } from './parsing/document-parser.js';
import { markdownHeadings } from './parsing/markdown.js';

/** One searchable piece of a story or document. */
export interface StoryChunk {
  /** 0, 1, 2, ... across the whole document. */
  ordinal: number;
  text: string;
  tokens: number;
  /** The page the chunk is on (a chunk never spans two pages). */
  page: number;
  /** Offsets in that page's text: `text === page.text.slice(charStart, charEnd)`. */
  charStart: number;
  charEnd: number;
  /** The words of the Markdown heading the chunk is under, if any. */
  heading: string | null;
}

interface Span {
  start: number;
  end: number;
}

interface Section extends Span {
  heading: string | null;
  /** Where the text under the heading line(s) starts (`start` when there is no heading). */
  bodyStart: number;
}

/**
 * Splits a document's pages into chunks of at most `maxTokens`. A chunk stays on one page, a
 * Markdown heading starts a new chunk and is remembered as the heading of the chunks under it
 * (on the following pages too, until the next heading), and the text under a heading is cut
 * as turns are (see `chunkMessage`): consecutive paragraphs packed up to the limit, a paragraph
 * too long on its own cut at sentence ends, then at spaces, then between characters.
 */
export function chunkStory(pages: ParsedPage[], maxTokens = 500): StoryChunk[] {
  const state = start(maxTokens);
  for (const page of pages) chunkText(state, page.number, page.text, 0);
  return state.out;
}

/**
 * `chunkStory` in steps of about `stepChars` characters, awaiting `pause` between them, so that
 * a long document never holds the event loop: a long page is read in parts cut at a paragraph
 * (or line, or word) break, each part's offsets counted in the whole page.
 */
export async function chunkStoryInSteps(
  pages: ParsedPage[],
  maxTokens: number,
  pause: () => Promise<unknown>,
  stepChars = 50_000,
): Promise<StoryChunk[]> {
  const state = start(maxTokens);
  let since = 0;
  for (const page of pages) {
    for (const part of parts(page.text, stepChars)) {
      chunkText(state, page.number, page.text.slice(part.start, part.end), part.start);
      since += part.end - part.start;
      if (since >= stepChars) {
        await pause();
        since = 0;
      }
    }
  }
  return state.out;
}

interface State {
  maxTokens: number;
  heading: string | null;
  out: StoryChunk[];
}

function start(maxTokens: number): State {
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new RangeError(`maxTokens must be a positive integer, not ${maxTokens}`);
  return { maxTokens, heading: null, out: [] };
}

/** Chunks `text`, found at `offset` in the text of page `page`. */
function chunkText(state: State, page: number, text: string, offset: number): void {
  for (const section of sections(text, state.heading)) {
    for (const span of pieces(text, section, state.maxTokens)) {
      const chunkText = text.slice(span.start, span.end);
      state.out.push({
        ordinal: state.out.length,
        text: chunkText,
        tokens: countTokens(chunkText),
        page,
        charStart: offset + span.start,
        charEnd: offset + span.end,
        heading: section.heading,
      });
    }
    state.heading = section.heading;
  }
}

/** A page's text in parts of at most about `size` characters, cut at the last break in each. */
function parts(text: string, size: number): Span[] {
  const out: Span[] = [];
  let from = 0;
  while (text.length - from > size) {
    const window = text.slice(from, from + size);
    const floor = Math.floor(size / 2);
    let cut = -1;
    for (const brk of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(brk);
      if (at >= floor) {
        cut = at + brk.length;
        break;
      }
    }
    const end = from + (cut > 0 ? cut : size);
    out.push({ start: from, end });
    from = end;
  }
  out.push({ start: from, end: text.length });
  return out;
}

/**
 * The page cut at its headings. The text before the first heading continues the section of
 * the page before. A heading with nothing under it but the next heading (a part's title above
 * a chapter's) stays with that one, whose words become the section's heading.
 */
function sections(text: string, carried: string | null): Section[] {
  const headings = markdownHeadings(text);
  const first = headings[0]?.start ?? text.length;
  const out: Section[] = [{ start: 0, end: first, heading: carried, bodyStart: 0 }];
  let start: number | null = null;
  for (let i = 0; i < headings.length; i++) {
    start ??= headings[i].start;
    const end = headings[i + 1]?.start ?? text.length;
    if (i + 1 < headings.length && !/\S/.test(text.slice(headings[i].end, end))) continue;
    out.push({ start, end, heading: headings[i].text, bodyStart: headings[i].end });
    start = null;
  }
  return out;
}

/**
 * The chunks of one section, as spans of the page's text. The heading line(s) go with the
 * first chunk of the text under them (never alone while there is text to go with): the text is
 * cut with room left for them.
 */
function pieces(text: string, section: Section, maxTokens: number): Span[] {
  const head = trim(text, { start: section.start, end: section.bodyStart });
  const headTokens = head ? countTokens(text.slice(head.start, head.end)) + 2 : 0;
  const room =
    maxTokens - headTokens >= Math.min(maxTokens, 20) ? maxTokens - headTokens : maxTokens;
  const out: Span[] = [];
  fit(text, { start: section.bodyStart, end: section.end }, room, room, out);
  if (!head) return out;
  const first = out[0];
  if (first && countTokens(text.slice(head.start, first.end)) <= maxTokens) {
    first.start = head.start;
    return out;
  }
  // Nothing under the heading, or no room for it after all: the heading is a chunk of its own.
  const headPieces: Span[] = [];
  fit(text, head, maxTokens, maxTokens, headPieces);
  return [...headPieces, ...out];
}

/**
 * Cuts the span with the turn chunker at `limit` and keeps each piece that is within
 * `maxTokens`. The turn chunker estimates the cost of the breaks between the paragraphs it
 * packs; a piece that came out over the limit all the same (a long run of blank lines) is cut
 * again with a lower limit.
 */
function fit(text: string, span: Span, maxTokens: number, limit: number, out: Span[]): void {
  const body = text.slice(span.start, span.end);
  for (const chunk of chunkMessage(body, { maxTokens: limit, chunking: true })) {
    // Offsets rather than the chunk's text: a code block too long to keep whole comes back
    // with its fences repeated on each part, which are not in the page.
    const piece = trim(text, { start: span.start + chunk.start, end: span.start + chunk.end });
    if (!piece) continue;
    const tokens = countTokens(text.slice(piece.start, piece.end));
    // At a limit of 1 the pieces are single characters, which cannot be cut further.
    if (tokens <= maxTokens || limit === 1) out.push(piece);
    else {
      const lower = Math.max(1, Math.min(limit - 1, maxTokens - (tokens - maxTokens)));
      fit(text, piece, maxTokens, lower, out);
    }
  }
}

function trim(text: string, span: Span): Span | null {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /\s/.test(text[end - 1])) end--;
  return end > start ? { start, end } : null;
}
