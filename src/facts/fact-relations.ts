/**
 * How a newly stated fact relates to one already stored for the same member and legacy:
 * the same fact said again, a newer fact that supersedes it, or unrelated. Deterministic rules
 * over the text, helped by the cosine similarity of the two facts' vectors when there is one.
 *
 * - DUPLICATE: the same normalized text; a restatement with the same or less detail; or a
 *   similarity at or above the duplicate threshold with no conflict between the two.
 * - CORRECTION: the two cannot both be true: a different value for a single-valued slot
 *   ("born in Ohio" / "born in Iowa", "favourite song was ..."), opposite feelings about the
 *   same thing ("loved jazz" / "hated jazz"), or one negates the other ("smoked" / "never smoked").
 * - UPDATE: the newer one ends or moves on from the older one's state ("taught school" /
 *   "retired from teaching in 1998"), or restates it with more detail.
 */
export type FactRelation = 'DUPLICATE' | 'CORRECTION' | 'UPDATE';

export interface RelationThresholds {
  /** Cosine at or above which two facts without a conflict are the same fact. */
  duplicate: number;
  /** Cosine at or above which two facts are about the same thing (for updates). */
  related: number;
}

/** Lower case, straight quotes, no punctuation, single spaces: equal strings are one fact. */
export function normalizeFact(content: string): string {
  return content
    .toLowerCase()
    .replace(/[‘’`]/g, "'")
    .replace(/[“”]/g, '"')
    .replace(/'s\b/g, 's')
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** One sentence, trimmed, ending in a full stop, with a capital first letter. */
export function tidyFact(content: string): string {
  let text = content.replace(/\s+/g, ' ').trim();
  if (text.length === 0) return text;
  text = text[0].toUpperCase() + text.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

const STOPWORDS = new Set(
  `a an the and or but of to in on at for from with by as is was were be been being are am his her
  their its our my your he she they them him it this that these those who whom which what when where
  how very really quite so just also too all any some many much more most one two then than there here
  had has have having do does did would could should will shall may might must can about into over after
  before during while since until up down out off again ever every each own same such only`.split(
    /\s+/,
  ),
);

const NEGATION =
  /\b(never|not|no|didn't|didnt|wasn't|wasnt|isn't|isnt|don't|dont|doesn't|doesnt|hardly|nobody|nothing)\b/;

/** The older state ended: retired, quit, no longer, moved away... */
const END_OF_STATE =
  /\b(retired|retiring|stopped|quit|quitting|gave up|no longer|anymore|any more|left|sold|closed|divorced|moved (away )?from|moved out of)\b/;

const NUMBER_WORDS = new Set(
  'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred'.split(
    ' ',
  ),
);

const POSITIVE =
  /\b(loved|liked|enjoyed|adored|was fond of|was a (huge |big )?fan of|was into)\b(.*)$/;
const NEGATIVE =
  /\b(hated|disliked|detested|couldn't stand|could not stand|did not like|didn't like|never liked|was not fond of|wasn't fond of)\b(.*)$/;

const IRREGULAR: Record<string, string> = {
  taught: 'teach',
  teacher: 'teach',
  fought: 'fight',
  sold: 'sell',
  built: 'build',
  bought: 'buy',
  drove: 'drive',
  driver: 'drive',
  ran: 'run',
  wrote: 'write',
  writer: 'write',
  sang: 'sing',
  singer: 'sing',
  led: 'lead',
  flew: 'fly',
  grew: 'grow',
  made: 'make',
  met: 'meet',
  went: 'go',
  gone: 'go',
  born: 'bear',
  kept: 'keep',
  left: 'leave',
  lost: 'lose',
  spoke: 'speak',
  swam: 'swim',
  won: 'win',
  married: 'marry',
  marriage: 'marry',
  died: 'die',
  death: 'die',
  worked: 'work',
  worker: 'work',
};

/** A crude stem: enough to match "teaching" with "taught" and "farms" with "farmer". */
export function stem(word: string): string {
  const w = word.toLowerCase();
  if (IRREGULAR[w]) return IRREGULAR[w];
  for (const suffix of ['ings', 'ing', 'ers', 'er', 'ied', 'ies', 'ed', 'es', 's']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      const base = w.slice(0, -suffix.length);
      if (suffix === 'ied' || suffix === 'ies') return `${base}y`;
      // "stopped" -> "stop", "planned" -> "plan"
      if (/([bdgmnprt])\1$/.test(base)) return base.slice(0, -1);
      return base;
    }
  }
  return w;
}

/** Everything the rules look at, computed once per fact. */
export interface FactFeatures {
  normalized: string;
  /** Stems of the content words, without the legacy's name and the rule words. */
  stems: Set<string>;
  slots: Map<string, string>;
  /** Numbers and number words ("three", "1998"). */
  quantities: Set<string>;
  polarity: { sign: 1 | -1; object: Set<string> } | null;
  negated: boolean;
  endsState: boolean;
  /** Birth and death do not end: later changes never supersede them, corrections do. */
  permanent: boolean;
}

/** Values are compared after this: "the city of Dayton, Ohio" and "Dayton Ohio" agree. */
function slotValue(raw: string): string {
  return raw
    .replace(/^(the|a|an)\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const MONTH =
  'january|february|march|april|may|june|july|august|september|october|november|december';

/** Slots that hold one value at a time; the value is what follows the predicate. */
const SLOTS: { name: (m: RegExpExecArray) => string; pattern: RegExp; value: number }[] = [
  {
    name: () => 'born:place',
    pattern: new RegExp(
      `\\bborn (?:and raised )?in (?!(?:${MONTH}|the year|\\d))([a-z][a-z '-]*?)(?= in \\d| on | at | to |$)`,
    ),
    value: 1,
  },
  { name: () => 'born:year', pattern: /\bborn\b.*?\b(1\d{3}|20\d{2})\b/, value: 1 },
  {
    name: () => 'died:place',
    pattern: new RegExp(
      `\\b(?:died|passed away) in (?!(?:${MONTH}|the year|\\d))([a-z][a-z '-]*?)(?= in \\d| on | at |$)`,
    ),
    value: 1,
  },
  { name: () => 'died:year', pattern: /\b(?:died|passed away)\b.*?\b(1\d{3}|20\d{2})\b/, value: 1 },
  {
    name: (m) => `favourite:${m[1]}`,
    pattern: /\bfavou?rite ([a-z]+(?: [a-z]+)?) (?:was|is|had been) (.+)$/,
    value: 2,
  },
  { name: () => 'middle-name', pattern: /\bmiddle name (?:was|is) (.+)$/, value: 1 },
  { name: () => 'maiden-name', pattern: /\bmaiden name (?:was|is) (.+)$/, value: 1 },
];

function wordsOf(text: string): string[] {
  return text.match(/[\p{L}\p{N}']+/gu) ?? [];
}

function stemsOf(text: string, ignore: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const word of wordsOf(text)) {
    const w = word.replace(/'/g, '');
    if (w.length < 2 || STOPWORDS.has(w) || ignore.has(w)) continue;
    if (NEGATION.test(word) || END_OF_STATE.test(w)) continue;
    out.add(stem(w));
  }
  return out;
}

/**
 * Features of a fact. `ignoreWords` are the words that name the legacy (its name, "dad", "he"),
 * which every fact shares and which therefore say nothing about what two facts are about.
 */
export function factFeatures(content: string, ignoreWords: ReadonlySet<string>): FactFeatures {
  const normalized = normalizeFact(content);
  const slots = new Map<string, string>();
  for (const slot of SLOTS) {
    const m = slot.pattern.exec(normalized);
    if (m) slots.set(slot.name(m), slotValue(m[slot.value]));
  }
  const lower = content.toLowerCase().replace(/[’]/g, "'");
  const negative = NEGATIVE.exec(lower);
  const positive = negative ? null : POSITIVE.exec(lower);
  const polarity = negative
    ? { sign: -1 as const, object: stemsOf(negative[negative.length - 1], ignoreWords) }
    : positive
      ? { sign: 1 as const, object: stemsOf(positive[positive.length - 1], ignoreWords) }
      : null;
  const stems = stemsOf(lower, ignoreWords);
  return {
    normalized,
    stems,
    slots,
    quantities: new Set([...stems].filter((s) => /^\d+$/.test(s) || NUMBER_WORDS.has(s))),
    polarity,
    negated: NEGATION.test(lower),
    endsState: END_OF_STATE.test(lower),
    permanent: [...slots.keys()].some((k) => k.startsWith('born:') || k.startsWith('died:')),
  };
}

function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared;
}

function isSubset(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size > 0 && overlap(a, b) === a.size;
}

function sameValue(a: string, b: string): boolean {
  return a === b || a.includes(b) || b.includes(a);
}

/** Why `newer` supersedes `older`, in a few words, for the history. */
export interface Classified {
  relation: FactRelation;
  detail: string;
  /** The newer fact restates the older with more detail, so it inherits its mentions. */
  restates?: boolean;
}

/**
 * How `newer` relates to `older`, or null when they are about different things.
 * `similarity` is the cosine of their vectors, null when either has none.
 */
export function classifyFacts(
  newer: FactFeatures,
  older: FactFeatures,
  similarity: number | null,
  thresholds: RelationThresholds,
): Classified | null {
  if (newer.normalized === older.normalized) {
    return { relation: 'DUPLICATE', detail: 'the same text' };
  }
  for (const [slot, value] of newer.slots) {
    const before = older.slots.get(slot);
    if (before !== undefined && !sameValue(value, before)) {
      return {
        relation: 'CORRECTION',
        detail: `${slot.replace(':', ' ')}: "${before}" became "${value}"`,
      };
    }
  }
  if (newer.polarity && older.polarity) {
    const sameObject = overlap(newer.polarity.object, older.polarity.object) > 0;
    if (newer.polarity.sign !== older.polarity.sign && sameObject) {
      return { relation: 'CORRECTION', detail: 'the opposite feeling about the same thing' };
    }
    // "loved jazz" and "loved the blues" read alike but are two facts.
    if (!sameObject) return null;
  }
  const differentQuantities =
    newer.quantities.size > 0 &&
    older.quantities.size > 0 &&
    !isSubset(newer.quantities, older.quantities) &&
    !isSubset(older.quantities, newer.quantities);
  if (differentQuantities) {
    const rest = (f: FactFeatures) => new Set([...f.stems].filter((x) => !f.quantities.has(x)));
    const a = rest(newer);
    const b = rest(older);
    if (a.size > 0 && a.size === b.size && overlap(a, b) === a.size) {
      return { relation: 'CORRECTION', detail: 'a different number for the same thing' };
    }
    return null;
  }
  if (
    newer.negated !== older.negated &&
    !newer.endsState &&
    (isSubset(newer.stems, older.stems) || isSubset(older.stems, newer.stems))
  ) {
    return { relation: 'CORRECTION', detail: 'one says the other is not so' };
  }
  // About the same thing: by meaning when both have vectors, else by shared words.
  const related =
    similarity !== null
      ? similarity >= thresholds.related
      : overlap(newer.stems, older.stems) * 2 >= older.stems.size && older.stems.size > 0;
  if (newer.endsState && !older.endsState && !older.permanent && related) {
    return { relation: 'UPDATE', detail: 'a later change to the same thing' };
  }
  if (
    !newer.endsState &&
    newer.stems.size > older.stems.size &&
    isSubset(older.stems, newer.stems) &&
    (similarity === null || similarity >= thresholds.related)
  ) {
    return { relation: 'UPDATE', detail: 'the same, with more detail', restates: true };
  }
  if (newer.negated !== older.negated) return null;
  if (
    isSubset(newer.stems, older.stems) &&
    similarity !== null &&
    similarity >= thresholds.related
  ) {
    return { relation: 'DUPLICATE', detail: 'said again, with less detail' };
  }
  if (similarity !== null && similarity >= thresholds.duplicate) {
    return { relation: 'DUPLICATE', detail: 'said again in other words' };
  }
  return null;
}
