/**
 * What a query says beyond its words: identifiers to match verbatim, whether it asks about
 * code, and whether it refers back to earlier conversations.
 */

const FILE_EXTENSIONS =
  'ts|tsx|js|jsx|mjs|cjs|json|ya?ml|toml|ini|env|md|txt|csv|sql|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|html|css|scss|vue|svelte|xml|lock|log|conf|cfg|dockerfile|gradle|proto|graphql|gql|ipynb|r|scala|lua|pl|ex|exs|dart|tf';

const IDENTIFIER_PATTERNS: RegExp[] = [
  // `anything in backticks`
  /`([^`\n]{2,80})`/g,
  // file names and paths: src/app.module.ts, package.json, .env
  new RegExp(
    `(?:^|[\\s("'])((?:[\\w.-]+/)*\\.?[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS}))(?=$|[\\s)"',;:!?])`,
    'gi',
  ),
  // camelCase and PascalCase with an inner capital: parseDate, HttpClient, getHTTPResponse
  /\b([a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b/g,
  // snake_case and SCREAMING_SNAKE: max_retries, CONTEXT_TOKEN_BUDGET
  /\b([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\b/g,
  // calls and dotted names: foo(), console.log, user.email
  /\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$][\w$]*\(\))/g,
];

/** Identifiers, file names, camelCase and snake_case words in the query, as written. */
export function extractIdentifiers(query: string): string[] {
  const found = new Set<string>();
  for (const re of IDENTIFIER_PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(query); m; m = re.exec(query)) {
      const value = m[1].trim().replace(/\(\)$/, '');
      // Abbreviations with dots (e.g., i.e.) are not identifiers.
      if (value.length < 3 || /^(?:[a-z]\.)+[a-z]?$/i.test(value)) continue;
      found.add(value);
    }
  }
  // Keep the longest form: `src/app.module.ts` makes `app.module` redundant.
  const all = [...found];
  return all.filter((v) => !all.some((o) => o !== v && o.includes(v)));
}

/** The share of identifiers found verbatim in the text (file names ignore case). */
export function identifierMatch(identifiers: readonly string[], text: string): number {
  if (identifiers.length === 0) return 0;
  const lower = text.toLowerCase();
  const hits = identifiers.filter((id) =>
    /\.[a-z0-9]+$/i.test(id) ? lower.includes(id.toLowerCase()) : text.includes(id),
  ).length;
  return hits / identifiers.length;
}

const CODE_WORDS =
  /\b(?:code|coding|function|method|class|bug|error|exception|stack ?trace|traceback|compile[rsd]?|snippet|script|regex|regexp|sql|query|api|endpoint|variable|import|export|module|package|library|npm|pip|docker|git|commit|branch|deploy|build|test|typescript|javascript|python|rust|java|kotlin|golang|schema|json|yaml|syntax|refactor|debug|crash(?:es|ed)?|null pointer|undefined|segfault)\b|代码|函数|报错|错误信息|程序|脚本|コード|関数|エラー/i;

/** Whether the query asks about code: identifiers, a code block or programming words. */
export function isCodeQuery(query: string, identifiers = extractIdentifiers(query)): boolean {
  return identifiers.length > 0 || /```|~~~/.test(query) || CODE_WORDS.test(query);
}

const REFERS_BACK = [
  /\b(?:last time|(?:the )?time before|before|earlier|previously|the other day|back then|once again)\b/i,
  /\b(?:remember(?:ed|s)?(?: when| that| how| what)?|recall|reminded?)\b/i,
  /\b(?:we|you and i|i) (?:(?:have|had) )?(?:talked|spoke|spoken|discussed|chatted|mentioned|said|told|went over)\b/i,
  /\b(?:you|i) (?:said|told me|told you|mentioned|asked)\b/i,
  /\b(?:as|like) (?:i|we|you) (?:said|mentioned)\b/i,
  /之前|以前|上次|上回|那次|记得|記得|说过|說過|聊过|聊過|提过|提過|讲过|講過|前回|この前|以前話した/,
];

/** Whether the message points back at earlier conversations ("last time", 之前, 上次, ...). */
export function refersBack(query: string): boolean {
  return REFERS_BACK.some((re) => re.test(query));
}

const ASKS_SUMMARY =
  /\b(?:summar(?:y|ies|ize|ise|ized|ised|izing|ising|ization|isation)|recaps?|sum (?:it |this |that |everything |things )?up)\b/i;

/**
 * Whether the message asks for a summary or recap ("Can you summarize how we approached the
 * move?"): what was discussed includes the agent's side, which search otherwise ranks below
 * the member's own words.
 */
export function asksSummary(query: string): boolean {
  return ASKS_SUMMARY.test(query);
}

/** Words for full-text and trigram search, in order, without duplicates or punctuation. */
export function queryWords(query: string): string[] {
  const words = query.match(/[\p{L}\p{N}][\p{L}\p{N}\p{M}'’_-]*/gu) ?? [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of words) {
    const word = raw.replace(/['’_-]+$/, '');
    const key = word.toLowerCase();
    if (!word || seen.has(key)) continue;
    seen.add(key);
    out.push(word);
  }
  return out;
}

/**
 * A websearch_to_tsquery input that ORs the words: natural questions rarely share every word
 * with what answers them. Operators of the websearch syntax cannot be injected: only letters,
 * digits and inner apostrophes or hyphens survive, and hyphens become spaces.
 */
export function websearchOr(words: readonly string[]): string {
  return words
    .map((w) => w.replace(/[-_]+/g, ' ').replace(/['’]/g, ''))
    .filter((w) => w.trim() && !/^(?:or|and|not)$/i.test(w))
    .join(' or ');
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Chinese, Japanese or Korean characters: text without spaces between words. */
export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/**
 * Probes for the trigram fallback: words of 3+ characters (typos in names still share most
 * trigrams), and for CJK text, which has no spaces, windows of 3 characters every 2.
 */
export function trigramProbes(query: string, max = 12): string[] {
  const probes: string[] = [];
  for (const word of queryWords(query)) {
    if (CJK.test(word)) {
      const chars = [...word].filter((c) => CJK.test(c));
      if (chars.length <= 3) {
        if (chars.length >= 2) probes.push(chars.join(''));
        continue;
      }
      for (let i = 0; i < chars.length - 1; i += 2) probes.push(chars.slice(i, i + 3).join(''));
    } else if (word.length >= 3) {
      probes.push(word);
    }
  }
  // Longer probes are more specific: keep those when there are too many.
  return [...new Set(probes)]
    .map((p, i) => ({ p, i }))
    .sort((a, b) => [...b.p].length - [...a.p].length || a.i - b.i)
    .slice(0, max)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.p);
}

/**
 * A tsquery literal ORing (or with `&`, ANDing) lexemes as they are (already normalized, so not
 * through a parser that would stem them again); quotes and backslashes escaped.
 */
export function lexemeQuery(lexemes: string[], operator: '|' | '&' = '|'): string {
  return lexemes
    .map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`)
    .join(` ${operator} `);
}

/** Words in more turns than this share of the scope (and this many) do not select turns. */
export const COMMON_WORD_SHARE = 0.02;
export const COMMON_WORD_MIN_DF = 2000;
/**
 * The turns the selecting words may find together (the sum of their document frequencies, an
 * upper bound): past it, the more common of them stop selecting.
 */
export const SELECTED_TURNS_BUDGET = 5000;

/**
 * The lexemes that select turns for BM25. A word most turns hold would make BM25 score most
 * turns while barely moving their scores, so only the rarer words select (every query word still
 * scores the turns they find); when every word is common, all of them select. In a large scope
 * the selection is then cut, rarest first, to the words that together hold at most
 * SELECTED_TURNS_BUDGET turns (always the rarest one): a turn that holds none of the rarer query
 * words reaches BM25's top only by stacking common ones.
 */
export function selectingLexemes(known: { lexeme: string; df: number }[], docs: number): string[] {
  const cap = Math.max(COMMON_WORD_MIN_DF, docs * COMMON_WORD_SHARE);
  const rarer = known.filter((l) => l.df <= cap);
  const selecting = rarer.length > 0 ? rarer : known;
  const kept = new Set<string>();
  let turns = 0;
  for (const l of [...selecting].sort((a, b) => a.df - b.df || (a.lexeme < b.lexeme ? -1 : 1))) {
    if (kept.size > 0 && turns + l.df > SELECTED_TURNS_BUDGET) break;
    kept.add(l.lexeme);
    turns += l.df;
  }
  return selecting.filter((l) => kept.has(l.lexeme)).map((l) => l.lexeme);
}
