import type { PeriodSource, PeriodSummaryText, SummarizePeriodInput } from '../language-model.js';
import { contentWords, isQuestion, normalizeQuotes, splitSentences, trimSentence } from './text.js';

/**
 * HEURISTIC look back on a period, for LLM=local: an aggregate of what is stored, not a written
 * summary. Themes are the content words that carry the most weight across the sources (a week
 * at a month's edge counts by its share of days), recurring patterns the themes that came back
 * in several conversations or shorter periods, the tone a tally of emotion words, and the text
 * the counts and the most central sentences, verbatim.
 */

/** Words too general to be a theme of remembering someone. */
const NOT_THEMES = new Set(
  `user assistant said say says told tell know think thought want wanted remember remembered
  talk talked talking time times day days week weeks month months year years today yesterday
  always never something anything everything someone people thing make made going went come came
  back good great little bit kind sure maybe around though used would could should every last
  next first keepsake conversation summary alway still really much found took gave kept knew felt
  love like best behind built ran sat sang drove wrote bought brought taught caught left wore won
  got began spent january february march april may june july august september october november
  december monday tuesday wednesday thursday friday saturday sunday`.split(/\s+/),
);

/**
 * A theme is a thing or an activity: adverbs (-ly), superlatives (-est) and past tenses (-ed)
 * tell how, not what. English only; other languages keep every content word.
 */
function themeLike(word: string): boolean {
  if (NOT_THEMES.has(word) || /^\d+$/.test(word)) return false;
  if (word.length > 4 && /(ly|ed)$/.test(word)) return false;
  return !(word.length > 5 && word.endsWith('est'));
}

const TONES: { tone: string; words: RegExp }[] = [
  {
    tone: 'grief',
    words:
      /\b(miss(ed|es|ing)?|grie(f|ving|ve)|sad(ness)?|cr(y|ied|ying)|tears?|passed away|funeral|lost (him|her)|gone|loss|mourn\w*|hard day)\b/gi,
  },
  {
    tone: 'warmth',
    words:
      /\b(lov(e|ed|ing)|laugh(ed|ing|s)?|smil(e|ed|ing)|happ(y|iness)|joy(ful)?|fun|wonderful|beautiful|proud|grateful|thankful|cherish\w*|sweet)\b/gi,
  },
  {
    tone: 'nostalgia',
    words:
      /\b(used to|back then|childhood|growing up|old days|remember(ed|ing)? when|as a kid)\b/gi,
  },
  {
    tone: 'worry',
    words: /\b(worr(y|ied|ies)|anxious|afraid|scared|stress(ed|ful)?|guilt(y)?|regret\w*)\b/gi,
  },
];

const OWN_LINE = /^(Looking back on |What came up most: )/;

const MAX_THEMES = 8;
const MAX_PATTERNS = 5;
const MAX_NAMES = 15;
const CENTRAL_SENTENCES = 3;

function label(period: SummarizePeriodInput['period']): string {
  return period === 'WEEK' ? 'week' : period === 'MONTH' ? 'month' : 'year';
}

/** The text a source contributes sentences from: its summary, or the user's own turns. */
function sourceSentences(source: PeriodSource): string[] {
  const texts = source.kind === 'TURNS' ? source.userTurns : [source.text];
  const out: string[] = [];
  for (const text of texts) {
    for (const raw of splitSentences(text)) {
      const sentence = trimSentence(raw);
      // An aggregate's own lines (its counts, its themes) are not something that was said.
      if (sentence.length < 20 || isQuestion(sentence) || OWN_LINE.test(sentence)) {
        continue;
      }
      out.push(sentence);
    }
  }
  return out;
}

/**
 * Content words with their weight, less names (the person remembered, people and places are
 * listed apart). A shorter period's themes count by their rank in it: its first theme most.
 */
function themeWords(source: PeriodSource, names: Set<string>): [string, number][] {
  if (source.kind === 'WEEK' || source.kind === 'MONTH') {
    const n = source.themes.length;
    return source.themes.map((t, i) => [t.toLowerCase(), (n - i) / n]);
  }
  return contentWords(sourceSentences(source).join(' '))
    .filter((w) => themeLike(w) && !names.has(w))
    .map((w) => [w, 1]);
}

function same(a: string, b: string): boolean {
  return normalizeQuotes(a).toLowerCase() === normalizeQuotes(b).toLowerCase();
}

function ranked(weights: Map<string, number>, max: number): string[] {
  return [...weights.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([w]) => w);
}

function add(map: Map<string, number>, key: string, weight: number): void {
  map.set(key, (map.get(key) ?? 0) + weight);
}

/** Names as first written, most mentioned first; case-insensitive duplicates merged. */
function names(lists: { names: string[]; weight: number }[]): string[] {
  const weights = new Map<string, number>();
  const spelled = new Map<string, string>();
  for (const { names: list, weight } of lists) {
    for (const name of list) {
      const key = name.trim().toLowerCase();
      if (!key) continue;
      if (!spelled.has(key)) spelled.set(key, name.trim());
      add(weights, key, weight);
    }
  }
  return ranked(weights, MAX_NAMES).map((k) => spelled.get(k)!);
}

function toneOf(sources: PeriodSource[]): string {
  const votes = new Map<string, number>();
  for (const source of sources) {
    if (source.emotionalTone) {
      // "mostly warmth, with grief": the first tone named counts three times the second.
      const second = /,\s*with\s+(\w+)$/.exec(source.emotionalTone)?.[1];
      for (const { tone } of TONES) {
        if (!source.emotionalTone.includes(tone)) continue;
        add(votes, tone, source.weight * (tone === second ? 1 : 3));
      }
      continue;
    }
    const text = sourceSentences(source).join(' ');
    for (const { tone, words } of TONES) {
      const hits = text.match(words)?.length ?? 0;
      if (hits > 0) add(votes, tone, hits * source.weight);
    }
  }
  const order = ranked(votes, 2);
  if (order.length === 0) return 'no strong emotion words';
  const [first, second] = order;
  if (!second || votes.get(second)! < votes.get(first)! / 3) return `mostly ${first}`;
  return `mostly ${first}, with ${second}`;
}

export function summarizePeriodHeuristic(input: SummarizePeriodInput): PeriodSummaryText {
  const themeWeights = new Map<string, number>();
  const seenIn = new Map<string, Set<string>>();
  const nameWords = new Set(
    contentWords(
      [input.legacyName, ...input.sources.flatMap((s) => [...s.people, ...s.places])].join(' '),
    ),
  );
  for (const source of input.sources) {
    const words = themeWords(source, nameWords);
    const unit =
      source.kind === 'WEEK' || source.kind === 'MONTH'
        ? `${source.kind}:${source.from}`
        : (source.conversationIds[0] ?? source.from);
    for (const [w, factor] of words) {
      add(themeWeights, w, source.weight * factor);
      if (!seenIn.has(w)) seenIn.set(w, new Set());
      seenIn.get(w)!.add(unit);
    }
    // A pattern a shorter period already saw recurs here too.
    for (const pattern of source.patterns) add(themeWeights, pattern.toLowerCase(), 0);
  }
  const keyThemes = ranked(themeWeights, MAX_THEMES);
  const unitName =
    input.period === 'WEEK' ? 'conversations' : input.period === 'MONTH' ? 'weeks' : 'months';
  const recurring = keyThemes
    .map((t) => ({ t, n: seenIn.get(t)?.size ?? 0 }))
    .filter((x) => x.n >= 2)
    .slice(0, MAX_PATTERNS)
    .map(({ t, n }) => `${t} came up in ${n} ${unitName}`);

  // The most central sentences: those that carry the most theme weight, in the order said.
  const top = new Set(keyThemes);
  const candidates = input.sources.flatMap((source, order) =>
    sourceSentences(source).map((text, i) => {
      const words = new Set(contentWords(text));
      let score = 0;
      for (const w of words) if (top.has(w)) score += themeWeights.get(w) ?? 0;
      return { text, score: (score * source.weight) / Math.sqrt(words.size || 1), order, i };
    }),
  );
  const central = candidates
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order || a.i - b.i)
    // The same sentence from a summary and from a turn, whatever its quotes, is one sentence.
    .filter((c, i, all) => all.findIndex((x) => same(x.text, c.text)) === i)
    .slice(0, CENTRAL_SENTENCES)
    .sort((a, b) => a.order - b.order || a.i - b.i)
    .map((c) => c.text);

  const conversations = `${input.conversationCount} conversation${input.conversationCount === 1 ? '' : 's'}`;
  const turns = `${input.turnCount} turn${input.turnCount === 1 ? '' : 's'}`;
  const lines = [
    `Looking back on the ${label(input.period)} of ${input.start} to ${input.end}: ${conversations} about ${input.legacyName}, ${turns}.`,
  ];
  if (keyThemes.length > 0) lines.push(`What came up most: ${keyThemes.join(', ')}.`);
  lines.push(...central);
  return {
    summary: lines.join(' ').slice(0, 4000),
    emotionalTone: toneOf(input.sources),
    keyThemes,
    recurringPatterns: recurring,
    people: names(input.sources.map((s) => ({ names: s.people, weight: s.weight }))),
    places: names(input.sources.map((s) => ({ names: s.places, weight: s.weight }))),
  };
}
