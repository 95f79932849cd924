import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * The text of a DOCX as light Markdown, from the HTML mammoth made of it (in the worker):
 * headings as `# ` lines, paragraphs separated by blank lines, list items as `- ` / `1. ` lines
 * and table rows as `cell | cell` lines (the lines of one list or one table kept together).
 */
export async function docxText(html: string): Promise<string> {
  const out = new MarkdownWriter();
  let n = 0;
  for (const m of html.matchAll(TAG)) {
    if (m[4] !== undefined) out.write(decodeEntities(m[4]));
    else out.tag(m[2].toLowerCase(), m[1] === '/', m[3]);
    // A long document's markup is read in steps: the event loop is never held for long.
    if (++n % 20_000 === 0) await yieldToLoop();
  }
  return out.finish();
}

interface Block {
  text: string;
  /** Blocks of one list or one table: joined by a line break, not a blank line. */
  group: number | null;
}

interface List {
  ordered: boolean;
  count: number;
}

/** mammoth's HTML (h1-h6, p, ul/ol/li, table/tr/td, br, a, inline styles): tags and text. */
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|([^<]+)/g;

/** A block that holds nothing but a heading mark or a list marker. */
const BARE = /^\s*(#{1,6}|-|\d+\.)?\s*$/;

class MarkdownWriter {
  private readonly blocks: Block[] = [];
  private current: Block | null = null;
  private readonly lists: List[] = [];
  private group: number | null = null;
  private groups = 0;
  /** The cells of the table row being read. */
  private row: string[] | null = null;
  /** Inside a link whose text is left out. */
  private skipping = 0;

  write(text: string): void {
    if (this.skipping > 0) return;
    if (this.row) this.row[this.row.length - 1] += text;
    else if (this.current) this.current.text += text;
    else this.current = { text, group: this.group };
  }

  tag(tag: string, closing: boolean, attributes: string): void {
    const heading = /^h([1-6])$/.exec(tag);
    if (heading || tag === 'p') {
      if (this.row) this.write(' ');
      else if (this.lists.length > 0) {
        // Inside a list item: its first paragraph is the item's line, later ones are indented.
        if (!closing && !(this.current && BARE.test(this.current.text)))
          this.start('  '.repeat(this.lists.length));
      } else if (closing) this.end();
      else this.start(heading ? `${'#'.repeat(Number(heading[1]))} ` : '');
    } else if (tag === 'ul' || tag === 'ol') {
      this.end();
      if (closing) {
        this.lists.pop();
        if (this.lists.length === 0) this.group = null;
      } else {
        this.group ??= ++this.groups;
        this.lists.push({ ordered: tag === 'ol', count: 0 });
      }
    } else if (tag === 'li') {
      if (closing) this.end();
      else {
        const list = this.lists[this.lists.length - 1];
        const marker = list?.ordered ? `${++list.count}. ` : '- ';
        this.start(`${'  '.repeat(Math.max(0, this.lists.length - 1))}${marker}`);
      }
    } else if (tag === 'table') {
      this.end();
      if (closing) {
        if (this.lists.length === 0) this.group = null;
      } else this.group ??= ++this.groups;
    } else if (tag === 'tr') {
      this.end();
      if (closing) {
        const cells = (this.row ?? []).map((cell) => cell.replace(/\s+/g, ' ').trim());
        this.row = null;
        if (cells.some(Boolean)) this.start(cells.join(' | '));
        this.end();
      } else this.row = [];
    } else if ((tag === 'td' || tag === 'th') && !closing) {
      this.row?.push('');
    } else if (tag === 'br') {
      this.write(this.row ? ' ' : '\n');
    } else if (tag === 'a') {
      // The "↑" link from a footnote back to where it is referenced.
      if (closing) this.skipping = Math.max(0, this.skipping - 1);
      else if (/href="#(?:foot|end)note-ref-/.test(attributes)) this.skipping++;
    }
  }

  finish(): string {
    this.end();
    let out = '';
    let previous: Block | null = null;
    for (const block of this.blocks) {
      const text = block.text
        .split('\n')
        .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trimEnd())
        .join('\n')
        .replace(/^\n+|\s+$/g, '');
      if (BARE.test(text)) continue;
      if (previous)
        out += previous.group !== null && previous.group === block.group ? '\n' : '\n\n';
      out += text;
      previous = block;
    }
    return out;
  }

  private start(prefix: string): void {
    this.end();
    this.current = { text: prefix, group: this.group };
  }

  private end(): void {
    if (this.current) this.blocks.push(this.current);
    this.current = null;
  }
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name] ?? whole;
  });
}
