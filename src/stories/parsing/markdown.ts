/** An ATX heading line (`# Title`, `## Part`) of a Markdown text. */
export interface MarkdownHeading {
  /** 1 for `#`, up to 6. */
  level: number;
  /** The heading's words, without the marks. */
  text: string;
  /** Offsets of the whole line (without its newline). */
  start: number;
  end: number;
}

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The ATX headings of a Markdown text, in order. Lines inside fenced code blocks are not
 * headings (a `# comment` in a shell snippet), and neither is a heading without words.
 */
export function markdownHeadings(text: string): MarkdownHeading[] {
  const out: MarkdownHeading[] = [];
  let fence: string | null = null;
  for (let start = 0; start < text.length;) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    const line = text.slice(start, end);
    const open = FENCE.exec(line);
    if (fence !== null) {
      // A closing fence: the same character, at least as long, nothing after it.
      if (
        open &&
        open[1][0] === fence[0] &&
        open[1].length >= fence.length &&
        !/\S/.test(line.slice(open[0].length))
      )
        fence = null;
    } else if (open) {
      fence = open[1];
    } else {
      const heading = HEADING.exec(line);
      const words = heading?.[2].trim();
      if (heading && words) out.push({ level: heading[1].length, text: words, start, end });
    }
    if (nl === -1) break;
    start = nl + 1;
  }
  return out;
}

/** The words of the first level-1 heading, or null. */
export function markdownTitle(text: string): string | null {
  return markdownHeadings(text).find((h) => h.level === 1)?.text ?? null;
}
