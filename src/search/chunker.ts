import { countTokens } from '../llm/tokenizer.js';

/** One searchable piece of a turn. */
export interface Chunk {
  /** 0, 1, 2, ... within the turn. */
  position: number;
  text: string;
  tokens: number;
  /** A fenced code block (or part of one), kept whole when it fits. */
  isCode: boolean;
  /** The fence's info string (`ts`, `python`), for code. */
  language: string | null;
  /** Character offsets of the chunk in the turn (for code parts: of the lines they hold). */
  start: number;
  end: number;
}

export interface ChunkOptions {
  maxTokens: number;
  /** Off: the whole turn is one chunk, whatever its length. */
  chunking: boolean;
}

interface Span {
  start: number;
  end: number;
}

interface CodeBlock extends Span {
  kind: 'code';
  fence: string;
  language: string | null;
  /** The lines between the fences. */
  body: Span;
}

interface Prose extends Span {
  kind: 'prose';
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^\n]*$/;

/** Splits the text into fenced code blocks and prose regions, by line. */
function blocks(text: string): (CodeBlock | Prose)[] {
  const out: (CodeBlock | Prose)[] = [];
  const lines: Span[] = [];
  for (let start = 0; start <= text.length;) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    lines.push({ start, end });
    if (nl === -1) break;
    start = nl + 1;
  }
  let proseStart: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = text.slice(lines[i].start, lines[i].end);
    const open = FENCE_OPEN.exec(line);
    if (!open) {
      proseStart ??= lines[i].start;
      continue;
    }
    const fence = open[1];
    const closer = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
    let close = i + 1;
    while (close < lines.length && !closer.test(text.slice(lines[close].start, lines[close].end)))
      close++;
    if (proseStart !== null) {
      out.push({ kind: 'prose', start: proseStart, end: lines[i].start });
      proseStart = null;
    }
    // An unclosed fence runs to the end of the turn, as Markdown renders it.
    const last = Math.min(close, lines.length - 1);
    const bodyStart = i + 1 <= last ? lines[i + 1].start : lines[i].end;
    const bodyEnd = close < lines.length ? lines[close].start : text.length;
    out.push({
      kind: 'code',
      start: lines[i].start,
      end: lines[last].end,
      fence,
      language: open[2] || null,
      body: { start: bodyStart, end: Math.max(bodyStart, bodyEnd) },
    });
    i = last;
  }
  if (proseStart !== null) out.push({ kind: 'prose', start: proseStart, end: text.length });
  return out;
}

/** Non-blank paragraphs of a prose region (separated by blank lines), trimmed. */
function paragraphs(text: string, region: Span): Span[] {
  const out: Span[] = [];
  const re = /\n[ \t]*\n/g;
  re.lastIndex = region.start;
  let start = region.start;
  for (;;) {
    const m = re.exec(text);
    const end = m && m.index < region.end ? m.index : region.end;
    const span = trim(text, { start, end });
    if (span) out.push(span);
    if (!m || m.index >= region.end) break;
    start = m.index + m[0].length;
  }
  return out;
}

function trim(text: string, span: Span): Span | null {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /\s/.test(text[end - 1])) end--;
  return end > start ? { start, end } : null;
}

/** Sentence spans: after . ! ? … and their CJK forms. */
function sentences(text: string, span: Span): Span[] {
  const out: Span[] = [];
  const re = /[.!?…]+["'”’)\]]*\s+|[。！？]+["'”’）」』]*\s*/g;
  re.lastIndex = span.start;
  let start = span.start;
  for (;;) {
    const m = re.exec(text);
    if (!m || m.index >= span.end) break;
    const end = Math.min(m.index + m[0].length, span.end);
    const piece = trim(text, { start, end });
    if (piece) out.push(piece);
    start = end;
    if (m[0].length === 0) re.lastIndex++;
  }
  const rest = trim(text, { start, end: span.end });
  if (rest) out.push(rest);
  return out;
}

function words(text: string, span: Span): Span[] {
  const out: Span[] = [];
  const re = /\S+/g;
  re.lastIndex = span.start;
  for (let m = re.exec(text); m && m.index < span.end; m = re.exec(text)) {
    out.push({ start: m.index, end: Math.min(m.index + m[0].length, span.end) });
  }
  return out;
}

/** Last resort for text without spaces (CJK, long tokens): cut by characters. */
function byCharacters(text: string, span: Span, maxTokens: number): Span[] {
  const out: Span[] = [];
  let start = span.start;
  while (start < span.end) {
    let end = Math.min(span.end, start + maxTokens * 4);
    if (countTokens(text.slice(start, end)) > maxTokens) {
      // The longest prefix within the limit, by bisection.
      let lo = start + 1;
      let hi = end;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (countTokens(text.slice(start, mid)) <= maxTokens) lo = mid;
        else hi = mid - 1;
      }
      end = lo;
    }
    // Never split a surrogate pair.
    if (end < span.end && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
    out.push({ start, end: Math.max(end, start + 1) });
    start = Math.max(end, start + 1);
  }
  return out;
}

/**
 * Packs consecutive spans into pieces of at most maxTokens, splitting a span that is too big
 * on its own with the next finer splitter (paragraph, sentence, word, character).
 */
function pack(
  text: string,
  spans: Span[],
  maxTokens: number,
  finer: ((span: Span) => Span[])[],
): Span[] {
  const out: Span[] = [];
  let current: Span | null = null;
  let currentTokens = 0;
  const flush = () => {
    if (current) out.push(current);
    current = null;
    currentTokens = 0;
  };
  for (const span of spans) {
    const tokens = countTokens(text.slice(span.start, span.end));
    if (tokens > maxTokens) {
      flush();
      if (finer.length === 0) {
        out.push(...byCharacters(text, span, maxTokens));
      } else {
        const [next, ...rest] = finer;
        out.push(...pack(text, next(span), maxTokens, rest));
      }
      continue;
    }
    if (current) {
      const merged: Span = { start: (current as Span).start, end: span.end };
      // The separator between spans costs a token or two: count the merged text itself.
      const mergedTokens =
        currentTokens + tokens + 2 > maxTokens
          ? countTokens(text.slice(merged.start, merged.end))
          : currentTokens + tokens + 2;
      if (mergedTokens <= maxTokens) {
        current = merged;
        currentTokens = mergedTokens;
        continue;
      }
      flush();
    }
    current = span;
    currentTokens = tokens;
  }
  flush();
  return out;
}

function codeChunks(text: string, block: CodeBlock, maxTokens: number): Omit<Chunk, 'position'>[] {
  const whole = text.slice(block.start, block.end);
  const tokens = countTokens(whole);
  if (tokens <= maxTokens) {
    return [
      {
        text: whole,
        tokens,
        isCode: true,
        language: block.language,
        start: block.start,
        end: block.end,
      },
    ];
  }
  // Too big to keep whole: parts at line boundaries, each fenced again so it reads as code.
  const open = `${block.fence}${block.language ?? ''}\n`;
  const close = `\n${block.fence}`;
  const room = Math.max(10, maxTokens - countTokens(open + close));
  const lines: Span[] = [];
  for (let start = block.body.start; start < block.body.end;) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 || nl >= block.body.end ? block.body.end : nl;
    if (end > start) lines.push({ start, end });
    start = end + 1;
  }
  return pack(text, lines, room, []).map((part) => {
    const body = text.slice(part.start, part.end);
    const chunk = `${open}${body}${close}`;
    return {
      text: chunk,
      tokens: countTokens(chunk),
      isCode: true,
      language: block.language,
      start: part.start,
      end: part.end,
    };
  });
}

/**
 * Splits a turn into searchable chunks of at most `maxTokens`: prose at paragraph boundaries
 * (then sentences, then words when a paragraph alone is too long), fenced code blocks whole
 * and marked as code (split at line boundaries only when a block alone is too long).
 */
export function chunkMessage(content: string, options: ChunkOptions): Chunk[] {
  const parts = blocks(content);
  if (!options.chunking) {
    const span = trim(content, { start: 0, end: content.length });
    if (!span) return [];
    const onlyCode =
      parts.length === 1 &&
      parts[0].kind === 'code' &&
      trim(content, parts[0])?.start === span.start;
    const block = onlyCode ? (parts[0] as CodeBlock) : null;
    const text = content.slice(span.start, span.end);
    return [
      {
        position: 0,
        text,
        tokens: countTokens(text),
        isCode: onlyCode,
        language: block?.language ?? null,
        ...span,
      },
    ];
  }
  const out: Omit<Chunk, 'position'>[] = [];
  for (const part of parts) {
    if (part.kind === 'code') {
      out.push(...codeChunks(content, part, options.maxTokens));
      continue;
    }
    const spans = pack(content, paragraphs(content, part), options.maxTokens, [
      (s) => sentences(content, s),
      (s) => words(content, s),
    ]);
    for (const span of spans) {
      const text = content.slice(span.start, span.end);
      out.push({ text, tokens: countTokens(text), isCode: false, language: null, ...span });
    }
  }
  return out.map((chunk, position) => ({ position, ...chunk }));
}
