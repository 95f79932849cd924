import type { PeriodSource, PeriodSummaryText, SummarizePeriodInput } from '../language-model.js';
import { eventsIn, splitNames } from './names.js';
import { entitiesOf } from './structured-lists.js';
import { contentWords, isQuestion, normalizeQuotes, splitSentences, trimSentence } from './text.js';

/**
 * HEURISTIC look back on a period, for LLM=local: an aggregate of what is stored, not a written
 * summary, but one a family can read. It names the people, places and events that came up
 * (from the summaries' lists, and from what was said: capitalised names, "a trip to Lisbon",
 * "the wedding"), then the activities and things talked about most (a week at a month's edge
 * counts by its share of days); recurring patterns are the themes that came back in several
 * conversations or shorter periods, the tone a tally of emotion words, and the text ends with
 * the most central sentences, verbatim.
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
  december monday tuesday wednesday thursday friday saturday sunday along across through about
  over under around away again ever even just only very quite deep old new big small long short
  high low red blue green yellow white black brown grey gray pink orange purple dark light warm
  cold hot nice lovely whole full empty same other another each both few many most more less
  grew lived died loved liked`.split(/\s+/),
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

const OWN_LINE =
  /^(Looking back on |What came up most: |People who came up: |Places: |Talked about: |In the words said: )/;

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

/** -ing words that are no activity. */
const NOT_ACTIVITIES = new Set(
  `thing nothing something anything everything morning evening during being going doing having
  saying thinking feeling looking getting making coming taking trying wanting telling talking
  knowing seeing putting sitting living spring king ring bring sing string wedding building
  ceiling darling sibling pudding stuffing wing`.split(/\s+/),
);

/**
 * What a source was about, with its weight: the events it names first (weighted double), then
 * activities ("gardening", "fishing"), then things named in more than one of its sentences,
 * less names (the person remembered, people and places are listed apart). A shorter period's
 * themes count by their rank in it: its first theme most.
 */
function themeWords(source: PeriodSource, names: Set<string>): [string, number][] {
  if (source.kind === 'WEEK' || source.kind === 'MONTH') {
    const n = source.themes.length;
    return source.themes.map((t, i) => [t.toLowerCase(), (n - i) / n]);
  }
  const sentences = sourceSentences(source);
  const out: [string, number][] = sentences.flatMap((s) =>
    eventsIn(s).map((e): [string, number] => [e, 3]),
  );
  const inSentences = new Map<string, number>();
  for (const sentence of sentences) {
    for (const w of new Set(contentWords(sentence))) {
      if (!themeLike(w) || names.has(w)) continue;
      inSentences.set(w, (inSentences.get(w) ?? 0) + 1);
    }
  }
  for (const [w, n] of inSentences) {
    const activity = w.length > 5 && w.endsWith('ing') && !NOT_ACTIVITIES.has(w);
    // A word said once is a detail, not what the talk was about; an activity counts at once.
    if (activity) out.push([w, 2 * n]);
    else if (n >= 2 || sentences.length === 1) out.push([w, n]);
  }
  return out;
}

/** People and places a source's own sentences name, when it came with no lists of its own. */
function namesOf(source: PeriodSource): { people: string[]; places: string[] } {
  if (source.people.length > 0 || source.places.length > 0 || source.kind !== 'TURNS') {
    return { people: source.people, places: source.places };
  }
  const text = source.userTurns.join('\n');
  const entities = splitSentences(text).flatMap((s) => entitiesOf(s));
  return splitNames([...new Set(entities)], text);
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
  if (order.length === 0) return 'calm: no strong feelings named';
  const [first, second] = order;
  if (!second || votes.get(second)! < votes.get(first)! / 3) return `mostly ${first}`;
  return `mostly ${first}, with ${second}`;
}

export function summarizePeriodHeuristic(input: SummarizePeriodInput): PeriodSummaryText {
  const themeWeights = new Map<string, number>();
  const seenIn = new Map<string, Set<string>>();
  const named = input.sources.map((s) => ({ ...namesOf(s), weight: s.weight }));
  const nameWords = new Set(
    contentWords([input.legacyName, ...named.flatMap((n) => [...n.people, ...n.places])].join(' ')),
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

  // The person remembered is in every conversation: the people are the others.
  const own = new Set(input.legacyName.toLowerCase().split(/\s+/));
  const people = names(named.map((n) => ({ names: n.people, weight: n.weight }))).filter(
    (p) =>
      !p
        .toLowerCase()
        .split(/\s+/)
        .every((w) => own.has(w)),
  );
  const places = names(named.map((n) => ({ names: n.places, weight: n.weight })));
  const conversations = `${input.conversationCount} conversation${input.conversationCount === 1 ? '' : 's'}`;
  const turns = `${input.turnCount} turn${input.turnCount === 1 ? '' : 's'}`;
  const lines = [
    `Looking back on the ${label(input.period)} of ${input.start} to ${input.end}: ${conversations} about ${input.legacyName}, ${turns}.`,
  ];
  if (people.length > 0) lines.push(`People who came up: ${list(people.slice(0, 6))}.`);
  if (places.length > 0) lines.push(`Places: ${list(places.slice(0, 6))}.`);
  if (keyThemes.length > 0) lines.push(`Talked about: ${list(keyThemes.slice(0, 6))}.`);
  if (central.length > 0)
    lines.push(`In the words said: ${central.map((c) => `“${c}”`).join(' ')}`);
  return {
    summary: clipAtSentence(lines.join(' '), 2000),
    emotionalTone: toneOf(input.sources),
    keyThemes,
    recurringPatterns: recurring,
    people,
    places,
  };
}

/** "a, b and c". */
function list(items: string[]): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function clipAtSentence(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const end = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('” '));
  return end > max / 2 ? cut.slice(0, end + 1) : `${cut.trimEnd()}…`;
}
