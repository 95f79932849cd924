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
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new RangeError(`maxTokens must be a positive integer, not ${maxTokens}`);
  const out: StoryChunk[] = [];
  let heading: string | null = null;
  for (const page of pages) {
    for (const section of sections(page.text, heading)) {
      for (const span of pieces(page.text, section, maxTokens)) {
        const text = page.text.slice(span.start, span.end);
        out.push({
          ordinal: out.length,
          text,
          tokens: countTokens(text),
          page: page.number,
          charStart: span.start,
          charEnd: span.end,
          heading: section.heading,
        });
      }
      heading = section.heading;
    }
  }
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
