/** Text helpers shared by the offline heuristics. Deterministic and dependency-free. */

const ABBREVIATIONS = /\b(Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Mt|vs|etc|e\.g|i\.e|approx|No)\.$/i;

/** Sentences of a text, split on ., ! and ? followed by a capital, a digit or a quote, and on line breaks. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n+/)) {
    const parts = line.split(/(?<=[.!?…]["”’')\]]?)\s+(?=["“‘'(]?[A-Z0-9])/);
    let carry = '';
    for (const part of parts) {
      const joined = carry ? `${carry} ${part}` : part;
      if (ABBREVIATIONS.test(joined.trim())) {
        carry = joined;
        continue;
      }
      carry = '';
      const sentence = joined.trim();
      if (sentence) out.push(sentence);
    }
    if (carry.trim()) out.push(carry.trim());
  }
  return out;
}

const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being
  below between both but by can could did do does doing down during each few for from further had has
  have having he her here hers herself him himself his how i if in into is it its itself just me more
  most my myself no nor not now of off on once only or other our ours ourselves out over own same she
  should so some such than that the their theirs them themselves then there these they this those
  through to too under until up very was we were what when where which while who whom why will with
  would you your yours yourself yourselves im ive id ill dont didnt doesnt cant couldnt wont wasnt isnt
  really just like yeah oh well okay ok one got get gets thing things lot still even much many`.split(
    /\s+/,
  ),
);

/** Lower-cased content words with a light plural stemming, for TF-IDF and overlap checks. */
export function contentWords(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/['’]/g, '')
      .match(/[a-z0-9]+/g) ?? []
  )
    .filter((w) => w.length > 2 && !STOPWORDS.has(w))
    .map((w) => (w.length > 4 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** Jaccard overlap of two texts' content words (0..1). */
export function overlap(a: string, b: string): number {
  const wa = new Set(contentWords(a));
  const wb = new Set(contentWords(b));
  if (wa.size === 0 || wb.size === 0) return 0;
  let shared = 0;
  for (const w of wa) if (wb.has(w)) shared++;
  return shared / (wa.size + wb.size - shared);
}

/** True when `text` restates one of `known` (same content words, give or take a few). */
export function isDuplicate(text: string, known: readonly string[]): boolean {
  return known.some((k) => overlap(text, k) >= 0.75);
}

/** Straight apostrophes and quotes, collapsed spaces: the patterns are written against these. */
export function normalizeQuotes(text: string): string {
  return text.replace(/[‘’]/g, "'").replace(/[“”]/g, '"').replace(/\s+/g, ' ').trim();
}

const QUESTION_START =
  /^(who|what|when|where|why|how|which|do|does|did|can|could|would|will|is|are|was|were|should|shall|may|have|has)\b.*\b(you|i|it|he|she|they|we|there|this|that)\b/i;

export function isQuestion(sentence: string): boolean {
  const s = sentence.trim();
  return s.endsWith('?') || (QUESTION_START.test(s) && !/[.!]$/.test(s));
}

/** Fillers that address the listener without being about them. */
const FILLERS = /\b(you know|you see|mind you|thank you for asking|if you ask me),?\s*/gi;

/**
 * Opinions about, requests to, or thanks for the assistant or the app. After fillers are
 * removed, a sentence in the second person is about the conversation, not the user's life.
 */
export function isAboutAssistant(sentence: string): boolean {
  const s = sentence.replace(FILLERS, '');
  return (
    /\b(you|your|you're|youre|yourself|u)\b/i.test(s) ||
    /\b(this|the) (app|bot|chat ?bot|chat|assistant|ai|tool|website|site|program|service)\b/i.test(
      s,
    ) ||
    /\b(thanks|thank|chatgpt)\b/i.test(s)
  );
}

/** Passing logistics: stepping away, coming back, small errands. Never worth remembering. */
const LOGISTICS =
  /\b(brb|be right back|(i'?ll|i will|i'?m|i am|will) be back|back in (a|\d+)|in a (minute|sec|second|moment|bit|few)|\d+ ?(min|mins|minutes|secs|seconds)\b|one (sec|second|moment)|hold on|hang on|gotta go|got to go|(have|need) to go( now)?\b|heading out|going to (bed|sleep)|off to bed|talk (to you )?(later|tomorrow|soon)|ttyl|let me (get|grab|check|find|think|see|look)|(grab|get|make|getting|grabbing|making) (a |some |my )?(coffee|tea|snack|bite|lunch|dinner|water|drink)|bathroom|restroom|toilet|(phone|battery) is (dying|low|about to die)|someone'?s at the door|my (phone|battery))\b/i;

export function isLogistics(sentence: string): boolean {
  return LOGISTICS.test(sentence);
}

const MEDICAL =
  /\b(cancer|tumou?rs?|diabetes|dementia|alzheimer'?s?|parkinson'?s?|strokes?|heart attack|heart failure|chemo(therapy)?|radiation|diagnos(is|ed|e)|medications?|meds|prescri(bed|ption)|pills?|insulin|surgery|operation|hospital(i[sz]ed)?|hospice|depression|depressed|anxiety|bipolar|adhd|ptsd|schizophreni\w*|therapy|therapist|psychiatrist|hiv|aids|covid|disease|illness|symptoms?|blood pressure|pregnan\w*|miscarriage|addict\w*|alcoholi\w*|rehab)\b/i;
const FINANCIAL =
  /\b(debts?|loans?|mortgage|salary|salaries|income|wages?|bankrupt\w*|credit card|bank account|account number|savings|pension|inheritance|inherit(ed)?|owe[sd]?|taxes|invest(ment|ments|ed|ing)|stocks|net worth|paycheck|[$€£]\s?\d[\d,.]*|\d[\d,.]*\s?(dollars|euros|pounds|k a year|grand))\b/i;

export function isMedicalOrFinancial(sentence: string): boolean {
  return MEDICAL.test(sentence) || FINANCIAL.test(sentence);
}

const HEDGES =
  /\b(i think|i guess|i suppose|i believe|maybe|probably|perhaps|kind of|sort of|kinda|sorta|not sure|might have|might be|i'm not certain|if i remember( correctly)?)\b/i;

export function isHedged(sentence: string): boolean {
  return HEDGES.test(sentence);
}

/** Rounds to two decimals so confidences compare exactly in tests and logs. */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/**
 * Longer sentences are not statements of a fact or a memory (a pasted document, or hostile
 * input): the extractors pass them over rather than run their patterns on them.
 */
export const MAX_SENTENCE_CHARS = 1000;

const isSpace = (c: string) => /\s/.test(c);

/**
 * Strips characters of `strip` from the end, in one pass. An end-anchored class such as
 * /[\s,]+$/ is retried from every position of a long run that does not reach the end: its time
 * grows with the square of the run (0.5 s for 32,000 characters).
 */
export function trimEndOf(text: string, strip: (c: string) => boolean): string {
  let end = text.length;
  while (end > 0 && strip(text[end - 1])) end--;
  return text.slice(0, end);
}

function trimStartOf(text: string, strip: (c: string) => boolean): string {
  let start = 0;
  while (start < text.length && strip(text[start])) start++;
  return text.slice(start);
}

const LEADING = new Set(['"', "'", '“', '”', '‘', '’', '(', '-']);
const TRAILING = new Set(['"', "'", '“', '”', '‘', '’', ')', '-']);

/** Quotes, brackets, dashes and spaces off both ends (linear, see trimEndOf). */
export function trimSentence(sentence: string): string {
  const start = trimStartOf(sentence, (c) => isSpace(c) || LEADING.has(c));
  return trimEndOf(start, (c) => isSpace(c) || TRAILING.has(c)).trim();
}
