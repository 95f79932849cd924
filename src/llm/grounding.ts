import { contentWords } from './heuristics/text.js';
import { PROMPT_EXAMPLES } from './prompts.js';

/**
 * Checks of a model's answer against what was actually said, not against the JSON's shape: a
 * memory is about the user only when the user's own words carry it, a fact only when it names
 * the person remembered and a member's turn carries it, and a summary only when it reads as
 * one. Real small models fail each of these while producing valid JSON (issue 38): they store
 * the other speaker's sentences, their own reply, compliments addressed to the user, a prompt's
 * example, a verbatim turn, or a summary that is a name or a timestamp.
 */

/** Words a third-person rewording adds that the speaker never says. */
const FRAME_WORDS = new Set([
  'user',
  'users',
  'their',
  'theirs',
  'they',
  'them',
  'themselves',
  'person',
  'someone',
  'speaker',
  'mentioned',
  'mention',
  'said',
  'say',
  'says',
  'told',
  'tell',
  'shared',
  'share',
  'stated',
  'state',
  'talked',
  'talk',
  'expressed',
  'express',
  'feel',
  'feels',
  'felt',
]);

/** Words compared by their first five letters: "walks" and "walking", "sister's" and "sister". */
function stems(text: string, drop: ReadonlySet<string> = FRAME_WORDS): string[] {
  return contentWords(text)
    .filter((w) => !drop.has(w))
    .map((w) => w.slice(0, 5));
}

/** The share (0..1) of `claim`'s content words that `source` says too. */
export function support(
  claim: string,
  source: string,
  drop: ReadonlySet<string> = FRAME_WORDS,
): number {
  const words = [...new Set(stems(claim, drop))];
  if (words.length === 0) return 0;
  const said = new Set(stems(source, drop));
  return words.filter((w) => said.has(w)).length / words.length;
}

/** A memory needs at least this share of its words from the user's own turn. */
export const MEMORY_SUPPORT = 0.5;
/** A fact needs at least this share of its words (the name aside) from a member's turn. */
export const FACT_SUPPORT = 0.5;
/** A summary needs at least this share of its words from the span it sums up. */
export const SUMMARY_SUPPORT = 0.3;

/** What a summary says about the conversation itself rather than what was said in it. */
const SUMMARY_FRAME = new Set([
  ...FRAME_WORDS,
  ...`remembered remember remembering recalled recall recalling conversation discussed discussing
  talked talking spoke speaking topic topics tone tones emotional emotion warm warmth nostalgic
  nostalgia fond fondly sad sadness happy joyful grief grieving loving loved reflective reflected
  reflecting memories memory assistant span overall mood also asked answered describe described`
    .split(/\s+/)
    .filter((w) => w.length > 0),
]);

/**
 * Whether a text copies one of the prompts' examples rather than saying something said: the
 * examples are patterns whose every detail is a <PLACEHOLDER> (PROMPT_EXAMPLES), so a copy
 * carries one, which nothing a family says does.
 */
export function echoesPromptExample(text: string): boolean {
  return /<[A-Z][A-Z' ]{2,}>/.test(text) || PROMPT_EXAMPLES.some((e) => same(e, text));
}

function same(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Why a memory proposed for one exchange is not the user's to keep, or null when it is. */
export function memoryProblem(
  content: string,
  userTurn: string,
  assistantTurn: string | undefined,
): string | null {
  const fromUser = support(content, userTurn);
  if (echoesPromptExample(content) && fromUser < 0.9) return 'it repeats a prompt example';
  if (fromUser < MEMORY_SUPPORT) {
    const fromAssistant = assistantTurn ? support(content, assistantTurn) : 0;
    return fromAssistant > fromUser
      ? 'it is what the other side said, not the user'
      : 'the user did not say it';
  }
  // "You're so brave" said to the user, or a reply written to them, is not about them.
  if (/\byou(?:r|rs|rself)?\b/i.test(content) && !/\byou(?:r|rs|rself)?\b/i.test(userTurn)) {
    return 'it is addressed to the user';
  }
  return null;
}

/** Names a fact may use for the person remembered: the full name and each part of it. */
function nameParts(legacyName: string): string[] {
  const parts = legacyName
    .toLowerCase()
    .split(/[^\p{L}\p{N}'’-]+/u)
    .filter((p) => p.length > 1);
  return [legacyName.toLowerCase(), ...parts];
}

const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us)\b/i;

/** Why a fact is not one about the legacy that a member's turns carry, or null when it is. */
export function factProblem(
  content: string,
  legacyName: string,
  sourceTexts: string[],
): string | null {
  const lower = content.toLowerCase();
  const names = nameParts(legacyName);
  if (!names.some((n) => new RegExp(`(^|[^\\p{L}])${escape(n)}($|[^\\p{L}])`, 'u').test(lower))) {
    return `it does not name ${legacyName}`;
  }
  // A turn copied whole ("I remember when we…") is what someone said, not a fact about them.
  if (FIRST_PERSON.test(content.replace(/[’]/g, "'"))) return 'it is a turn, not a fact';
  const drop = new Set([...FRAME_WORDS, ...names.flatMap((n) => contentWords(n))]);
  const fromTurns = Math.max(0, ...sourceTexts.map((t) => support(content, t, drop)));
  if (echoesPromptExample(content) && fromTurns < 0.9) return 'it repeats a prompt example';
  if (fromTurns < FACT_SUPPORT) return 'its source turns do not say it';
  return null;
}

/**
 * Why a text does not read as a summary, or null when it does: a few words that are not a
 * sentence ("Caroline", ",2023-07-12T16:33:00.000Z"), or one that the span does not carry.
 */
export function summaryProblem(summary: string, spanTexts: string[]): string | null {
  const tokens = summary.match(/\p{L}[\p{L}'’-]*/gu) ?? [];
  if (tokens.length < 6) return 'it is not a sentence';
  const letters = summary.replace(/[^\p{L}]/gu, '').length;
  if (letters / Math.max(1, summary.replace(/\s/g, '').length) < 0.6) return 'it is not prose';
  if (echoesPromptExample(summary)) return 'it repeats a prompt example';
  const words = new Set(stems(summary, SUMMARY_FRAME));
  if (
    spanTexts.length > 0 &&
    words.size > 0 &&
    support(summary, spanTexts.join('\n'), SUMMARY_FRAME) < SUMMARY_SUPPORT
  ) {
    return 'the span does not say it';
  }
  return null;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
