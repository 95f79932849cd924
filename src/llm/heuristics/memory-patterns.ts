import { ExtractMemoriesInput, ExtractedMemory, MemoryType } from '../language-model.js';
import {
  isAboutAssistant,
  isDuplicate,
  isHedged,
  isLogistics,
  isMedicalOrFinancial,
  isQuestion,
  MAX_SENTENCE_CHARS,
  normalizeQuotes,
  round2,
  splitSentences,
  trimSentence,
} from './text.js';

/**
 * HEURISTIC memory extraction: first-person patterns, not understanding. It only ever
 * returns the user's own sentence (or, for a named relative, a one-line template).
 *
 * Confidences are set against the default save threshold of 0.7:
 * - clear, lasting statements pass it: facts about the user (0.74: "I work as", "I live in"),
 *   named relatives (0.75), relationships (0.73), goals (0.72), explicit routines
 *   ("every Sunday I", 0.72), strong preferences ("I love", "my favourite", 0.72);
 * - vaguer or momentary ones stay below it: "I always/usually" (0.66), mild likes (0.66),
 *   feelings (0.62, "I miss" 0.66), goals tied to today or tonight (0.5);
 * - a hedge ("I think", "maybe") costs 0.15;
 * - medical and financial sentences are capped at 0.4, so they are never saved by default.
 * Opinions about the assistant, logistics, questions and conditionals are skipped outright.
 */
export const MEMORY_CONFIDENCE = {
  namedRelative: 0.75,
  fact: 0.74,
  relationship: 0.73,
  goal: 0.72,
  routine: 0.72,
  strongPreference: 0.72,
  habit: 0.66,
  mildPreference: 0.66,
  miss: 0.66,
  emotion: 0.62,
  pastHabit: 0.62,
  momentaryGoal: 0.5,
  hedgePenalty: 0.15,
  sensitiveCap: 0.4,
} as const;

const MAX_MEMORIES = 3;

interface Rule {
  type: MemoryType;
  pattern: RegExp;
  confidence: number;
  /** Extra condition on the lower-cased sentence. */
  accept?: (s: string) => boolean;
}

const RELATIVES =
  'sister|brother|wife|husband|partner|son|daughter|mother|mom|mum|father|dad|grandmother|grandma|grandfather|grandpa|aunt|uncle|cousin|niece|nephew|best friend|girlfriend|boyfriend|fiancee?|stepmother|stepfather|stepson|stepdaughter|mother-in-law|father-in-law|granddaughter|grandson|dog|cat';

const PRONOUN_OBJECT = /^(it|that|this|you|them|him|her|those|these|so much|a lot)\W*$/;

/** What follows the verb is a real object, not just "it" or "that". */
const hasObject = (verb: RegExp) => (s: string) => {
  const m = verb.exec(s);
  if (!m) return false;
  const rest = s.slice(m.index + m[0].length).trim();
  return rest.length > 0 && !PRONOUN_OBJECT.test(rest);
};

const TODAY = /\b(today|tonight|right now|this (morning|afternoon|evening)|now|tomorrow)\b/;

// First matching rule wins, so the more specific ones come first.
const RULES: Rule[] = [
  {
    type: 'GOAL',
    pattern:
      /\b(i want to|i wanna|i'd (really )?(like|love) to|i would (really )?(like|love) to|i hope to|i'm hoping to|my (goal|dream|plan) is|i plan to|i'm planning to|i am planning to|i intend to|i'm trying to|i am trying to|i've decided to|i have decided to)\b/,
    confidence: MEMORY_CONFIDENCE.goal,
  },
  {
    type: 'RELATIONSHIP',
    pattern: new RegExp(
      `\\b(my (${RELATIVES}) (is|was|lives|lived|works|worked|has|had|and i|passed|died|moved|just)|i have (a|an|two|three|four|five|\\d+) (sisters?|brothers?|kids|children|sons?|daughters?|grandchildren|grandkids)|i('m| am) (married|divorced|engaged|widowed|a widow(er)?)|i got (married|divorced|engaged))\\b`,
    ),
    confidence: MEMORY_CONFIDENCE.relationship,
  },
  {
    type: 'FACT',
    pattern:
      /\b(i work (as|at|for|in)|i('m| am) (working|employed) (as|at|for)|i live in|i('ve| have) lived in|i (grew up|was born|was raised) in|my name is|i('m| am) (retired|a student)|i moved to|i('m| am) from|i teach|i study|i('m| am) \d+ years old|i('m| am) an? ((?!bit\b|little\b|lot\b|mess\b|wreck\b|fan\b|loser\b|monster\b)[a-z]+(er|or|ist|ian|ant|ent)|nurse|doctor|chef|cook|pilot|vet|medic|mom|mum|dad|grandmother|grandfather)\b)/,
    confidence: MEMORY_CONFIDENCE.fact,
  },
  {
    type: 'PATTERN',
    pattern:
      /\b((every|each) (day|morning|evening|night|week|weekend|month|year|summer|winter|spring|fall|autumn|christmas|easter|birthday|anniversary|sunday|monday|tuesday|wednesday|thursday|friday|saturday)|on (sundays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|weekends))\b/,
    confidence: MEMORY_CONFIDENCE.routine,
    accept: (s) => /\b(i|we)\b/.test(s),
  },
  {
    type: 'PATTERN',
    pattern: /\bi (always|usually|often|tend to|regularly|never)\b/,
    confidence: MEMORY_CONFIDENCE.habit,
  },
  {
    type: 'PREFERENCE',
    pattern: /\bmy (favou?rite|favourite|fave)\b/,
    confidence: MEMORY_CONFIDENCE.strongPreference,
  },
  {
    type: 'PREFERENCE',
    pattern:
      /\bi (really |absolutely |just )?(love|adore|prefer|hate|can't stand|cannot stand|despise|dislike)\b/,
    confidence: MEMORY_CONFIDENCE.strongPreference,
    accept: hasObject(
      /\bi (really |absolutely |just )?(love|adore|prefer|hate|can't stand|cannot stand|despise|dislike)\b/,
    ),
  },
  {
    type: 'PREFERENCE',
    pattern: /\bi (really )?(like|enjoy)\b|\bi (don't|do not|never) (like|enjoy)\b/,
    confidence: MEMORY_CONFIDENCE.mildPreference,
    accept: hasObject(/\bi (really |don't |do not |never )?(like|enjoy)\b/),
  },
  {
    type: 'EMOTION',
    pattern: /\bi (still )?miss\b/,
    confidence: MEMORY_CONFIDENCE.miss,
  },
  {
    type: 'EMOTION',
    pattern:
      /\b(i (feel|felt)|i('m| am|'ve been| have been) (feeling |so |really |very |quite |a bit |still )?(sad|happy|angry|lonely|alone|anxious|worried|scared|afraid|grateful|heartbroken|devastated|lost|numb|overwhelmed|guilty|hopeful|relieved|proud|frustrated|exhausted|upset|miserable|empty|at peace))\b/,
    confidence: MEMORY_CONFIDENCE.emotion,
  },
  {
    type: 'PATTERN',
    pattern: /\bi used to\b/,
    confidence: MEMORY_CONFIDENCE.pastHabit,
  },
];

const NAMED_RELATIVE = new RegExp(`\\bmy (${RELATIVES}),? ([A-Z][a-z]+)\\b`, 'i');
const NOT_A_NAME = /^(and|but|is|was|has|had|who|said|says|just|always|never|used|loves?|loved)$/i;

function isFirstPerson(s: string): boolean {
  return /\b(i|i'm|i've|i'd|i'll|my|me|we|our)\b/.test(s);
}

function candidates(
  sentence: string,
  position: number,
): (ExtractedMemory & { position: number })[] {
  // Memories are one line; a run-on sentence is clipped to the schema's 500 characters.
  const trimmed = trimSentence(normalizeQuotes(sentence));
  const original = trimmed.length > 500 ? `${trimmed.slice(0, 499)}…` : trimmed;
  const s = original.toLowerCase();
  if (!isFirstPerson(s) || isQuestion(original) || isAboutAssistant(original)) return [];
  if (isLogistics(original) || /^(if|what if|unless)\b/.test(s)) return [];

  const found: (ExtractedMemory & { position: number })[] = [];
  const adjust = (base: number) => {
    let c = base;
    if (isHedged(s)) c -= MEMORY_CONFIDENCE.hedgePenalty;
    if (isMedicalOrFinancial(s)) c = Math.min(c, MEMORY_CONFIDENCE.sensitiveCap);
    return round2(c);
  };

  // "my sister Anna": a relationship worth its own line, whatever else the sentence says.
  const named = NAMED_RELATIVE.exec(original);
  if (named && /^[A-Z]/.test(named[2]) && !NOT_A_NAME.test(named[2])) {
    const relative = named[1].toLowerCase();
    found.push({
      content: `The user's ${relative} is named ${named[2]}.`,
      type: 'RELATIONSHIP',
      confidence: adjust(MEMORY_CONFIDENCE.namedRelative),
      position,
    });
  }

  for (const rule of RULES) {
    if (!rule.pattern.test(s) || (rule.accept && !rule.accept(s))) continue;
    if (found.some((f) => f.type === rule.type)) break;
    let base = rule.confidence;
    if (rule.type === 'GOAL' && TODAY.test(s)) base = MEMORY_CONFIDENCE.momentaryGoal;
    found.push({ content: original, type: rule.type, confidence: adjust(base), position });
    break;
  }
  return found;
}

/** HEURISTIC: at most three memories about the user, from the user's turn only. */
export function extractMemoriesHeuristic(input: ExtractMemoriesInput): ExtractedMemory[] {
  const known = [...(input.existingMemories ?? [])];
  const all = splitSentences(input.userTurn).flatMap((sentence, i) =>
    sentence.length > MAX_SENTENCE_CHARS ? [] : candidates(sentence, i),
  );
  const kept: (ExtractedMemory & { position: number })[] = [];
  for (const memory of all) {
    if (isDuplicate(memory.content, known)) continue;
    kept.push(memory);
    known.push(memory.content);
  }
  return kept
    .sort((a, b) => b.confidence - a.confidence || a.position - b.position)
    .slice(0, MAX_MEMORIES)
    .map(({ content, type, confidence }) => ({ content, type, confidence }));
}
