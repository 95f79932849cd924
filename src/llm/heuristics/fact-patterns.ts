import { FactCategory, LegacyFact, SummaryTurn } from '../language-model.js';
import {
  isDuplicate,
  isHedged,
  isLogistics,
  isMedicalOrFinancial,
  isQuestion,
  MAX_SENTENCE_CHARS,
  trimEndOf,
  normalizeQuotes,
  round2,
  splitSentences,
  trimSentence,
} from './text.js';

/**
 * HEURISTIC extraction of facts about the legacy: third-person sentences from the user's turns
 * whose subject is the legacy ("Joe ...", "my dad ...", "he ..."), classified by verb and
 * keywords. The fact is the user's own sentence with the subject replaced by the legacy's name.
 *
 * Confidences, against a 0.7 save threshold: biographical statements (born, worked as,
 * married) 0.76, relationships 0.75, hobbies and tastes 0.74, habits and things made 0.72; personality
 * judgements are opinions and stay at 0.64. A pronoun subject ("he", "she") costs 0.03, a
 * hedge 0.15, and medical or financial sentences are capped at 0.4.
 */
export const FACT_CONFIDENCE: Record<FactCategory, number> = {
  MILESTONE: 0.76,
  OCCUPATION: 0.76,
  RELATIONSHIP: 0.75,
  HOBBY: 0.74,
  PREFERENCE: 0.74,
  HABIT: 0.72,
  OTHER: 0.72,
  PERSONALITY: 0.64,
};
const PRONOUN_PENALTY = 0.03;
const HEDGE_PENALTY = 0.15;
const SENSITIVE_CAP = 0.4;

const KIN_GROUPS: string[][] = [
  ['dad', 'father', 'daddy', 'papa', 'pop', 'pops'],
  ['mom', 'mother', 'mum', 'mommy', 'mama', 'mam', 'mummy'],
  ['grandpa', 'grandfather', 'granddad', 'grandad', 'gramps', 'grandpapa', 'opa', 'abuelo'],
  ['grandma', 'grandmother', 'granny', 'nana', 'nan', 'gran', 'grandmama', 'oma', 'abuela'],
  ['husband'],
  ['wife'],
  ['brother'],
  ['sister'],
  ['son'],
  ['daughter'],
  ['uncle'],
  ['aunt', 'auntie'],
  ['partner'],
];
/** Without a kinship word in the legacy's name, these are assumed to mean the legacy. */
const DEFAULT_KIN = [
  ...KIN_GROUPS[0],
  ...KIN_GROUPS[1],
  ...KIN_GROUPS[2],
  ...KIN_GROUPS[3],
  'husband',
  'wife',
];
const ALL_KIN = KIN_GROUPS.flat();
const MALE_KIN = new Set([
  ...KIN_GROUPS[0],
  ...KIN_GROUPS[2],
  'husband',
  'brother',
  'son',
  'uncle',
]);
const FEMALE_KIN = new Set([
  ...KIN_GROUPS[1],
  ...KIN_GROUPS[3],
  'wife',
  'sister',
  'daughter',
  'aunt',
  'auntie',
]);

/** The pronouns a mention of someone else could take: "my uncle" makes "he" ambiguous. */
function pronounsFor(kin: string): Pronoun[] {
  if (MALE_KIN.has(kin)) return ['he'];
  if (FEMALE_KIN.has(kin)) return ['she'];
  return ['he', 'she'];
}
type Pronoun = 'he' | 'she';

const OCCUPATIONS =
  'teacher|nurse|doctor|carpenter|engineer|farmer|mechanic|lawyer|pilot|soldier|sailor|marine|chef|cook|baker|miner|electrician|plumber|painter|musician|writer|accountant|secretary|pastor|priest|minister|rabbi|professor|firefighter|fireman|police officer|policeman|cop|officer|driver|truck driver|postman|mailman|salesman|shopkeeper|tailor|builder|architect|banker|dentist|pharmacist|librarian|scientist|journalist|machinist|welder|fisherman|clerk|manager|butcher|barber|hairdresser|waitress|waiter|homemaker|housewife|seamstress|veterinarian|vet|principal|nanny|midwife|surgeon|professor|designer|programmer|photographer|artist';

const PERSONALITY =
  'kind|funny|stubborn|generous|patient|gentle|strict|quiet|shy|loud|warm|caring|brave|proud|honest|hardworking|hard-working|loving|smart|clever|wise|grumpy|cheerful|optimistic|creative|curious|calm|tough|strong|sweet|witty|serious|humble|independent|private|social|outgoing|talkative|fearless|thoughtful|kind-hearted|soft-spoken|strong-willed|easygoing|easy-going';

const HOBBY_WORDS = new Set(
  `golf chess fishing music football soccer baseball basketball hockey tennis cards poker bridge crosswords
  puzzles piano guitar violin jazz opera gardening painting reading books cooking baking knitting hiking
  dancing singing camping woodworking birdwatching sailing hunting photography trains cars motorcycles
  stamps coins bowling cycling swimming running gardens westerns movies films theatre theater poetry`.split(
    /\s+/,
  ),
);

const DAYS =
  'morning|day|night|evening|week|weekend|month|year|summer|winter|christmas|sunday|monday|tuesday|wednesday|thursday|friday|saturday';

interface VerbRule {
  category: FactCategory;
  pattern: RegExp;
  /** Re-classifies on the object; null rejects the sentence. */
  refine?: (rest: string) => FactCategory | null;
}

const isActivity = (text: string): boolean => {
  const first = /^(?:the |a |an |his |her |to )?([a-z-]+)/.exec(text)?.[1] ?? '';
  return first.endsWith('ing') || HOBBY_WORDS.has(first);
};

// Applied to the lower-cased text after the subject; first match wins.
const VERB_RULES: VerbRule[] = [
  {
    category: 'RELATIONSHIP',
    pattern:
      /^(was married to|married (my|our|his|her|a)|had (a|an|two|three|four|five|six|seven|eight|\d+) (brothers?|sisters?|siblings|kids|children|sons?|daughters?|grandchildren|grandkids)|was (my|our|his|her) (best friend|hero|rock)|met (my|our|his|her)|was close to|adored (my|our|his|her)|raised (me|us))\b/,
  },
  {
    category: 'MILESTONE',
    pattern:
      /^(was born|grew up|got married|moved|emigrated|immigrated|graduated|served|fought|retired|died|passed away|passed on|won|founded|came to|arrived in|lived in|was raised|built (a|the|our|his|her) (own )?(house|home|business|company))\b/,
  },
  {
    category: 'OCCUPATION',
    pattern: new RegExp(
      `^(worked|used to work|was employed|ran (a|the|his|her)|owned (a|the)|taught|was (a|an|the) (${OCCUPATIONS}))\\b`,
    ),
  },
  {
    category: 'PREFERENCE',
    pattern: /^(hated|couldn't stand|could not stand|disliked|preferred|always preferred)\b/,
  },
  {
    category: 'HOBBY',
    pattern:
      /^(loved|liked|enjoyed|adored|played|collected|painted|sang|fished|gardened|knitted|baked|was (really )?(into|obsessed with|a (huge |big )?fan of)|spent (hours|weekends|summers|his|her))\b/,
    refine: (rest) => {
      const object = rest.replace(/^(loved|liked|enjoyed|adored)\s+/, '');
      if (object === rest) return 'HOBBY';
      if (/^(me|us|you|him|her|them|it|that|this|my|our)\b/.test(object)) return null;
      return isActivity(object) ? 'HOBBY' : 'PREFERENCE';
    },
  },
  {
    category: 'HABIT',
    pattern: new RegExp(
      `^(always|never|usually|often|would always|used to|every (${DAYS})|each (${DAYS}))\\b`,
    ),
    refine: (rest) => {
      const m = /^used to ([a-z]+)\s*(.*)$/.exec(rest);
      if (
        m &&
        (isActivity(m[1]) ||
          /^(play|go|collect|paint|sing|fish|garden|knit|bake|cook|read|hike|swim|dance)$/.test(
            m[1],
          ))
      ) {
        return 'HOBBY';
      }
      return 'HABIT';
    },
  },
  {
    category: 'OTHER',
    pattern:
      /^(built|made|wrote|created|designed|restored|planted|invented|carved|sewed|composed|published|taught (me|us))\b/,
  },
  {
    category: 'PERSONALITY',
    pattern: new RegExp(
      `^(was|is) (always |so |very |really |quite |incredibly |such an? |an? (very |really |truly )?)?(${PERSONALITY})\\b`,
    ),
  },
];

interface Subject {
  /** Matches at the start of a normalised sentence; group 1 is the whole subject phrase. */
  pattern: RegExp;
  favourite: RegExp;
  mentionsOther: RegExp;
  mentionsLegacy: RegExp;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function subjectFor(legacyName: string): Subject {
  const words = legacyName.trim().split(/\s+/).filter(Boolean);
  const lower = words.map((w) => w.toLowerCase().replace(/[.,]/g, ''));
  const kinInName = KIN_GROUPS.find((group) => lower.some((w) => group.includes(w)));
  const kin = kinInName ?? DEFAULT_KIN;
  const names = words.filter(
    (w, i) => !ALL_KIN.includes(lower[i]) && !/^(mr|mrs|ms|dr|prof|sir|dame)\.?$/i.test(w),
  );
  const nameAlternatives = [legacyName.trim(), names.join(' '), names[0]]
    .filter((n): n is string => Boolean(n))
    .map(escape);
  const kinAlt = kin.map(escape).join('|');
  const connectors = '(?:(?:and|but|so|well|oh|yeah|also|anyway|actually|honestly|plus),?\\s+)*';
  const subject = `(${nameAlternatives.join('|')}|(?:my |our )?(?:late )?(?:${kinAlt})(?: (?:${names.map(escape).join('|') || '(?!)'}))?|he|she)`;
  const otherKin = ALL_KIN.filter((k) => !kin.includes(k))
    .map(escape)
    .join('|');
  return {
    pattern: new RegExp(`^${connectors}${subject}(?:,[^,]{1,40},)?\\s+`, 'i'),
    favourite: new RegExp(
      `^${connectors}(?:his|her|(?:${nameAlternatives.join('|')}|my (?:${kinAlt}))'s) favou?rite\\b`,
      'i',
    ),
    mentionsOther: new RegExp(`\\bmy (${otherKin})\\b`, 'i'),
    mentionsLegacy: new RegExp(`\\b(${nameAlternatives.join('|')}|${kinAlt})\\b`, 'i'),
  };
}

/** HEURISTIC: facts about the legacy from the user's turns of a span. */
export function extractFactsHeuristic(
  legacyName: string,
  turns: SummaryTurn[],
  existingFacts: readonly string[] = [],
): LegacyFact[] {
  const subject = subjectFor(legacyName);
  const known = [...existingFacts];
  const facts: LegacyFact[] = [];
  for (const turn of turns) {
    if (turn.role !== 'USER') continue;
    // "He" is only taken to mean the legacy until another "he" is brought up in the turn.
    const ambiguous = new Set<Pronoun>();
    for (const raw of splitSentences(turn.content)) {
      const sentence = trimSentence(normalizeQuotes(raw));
      if (subject.mentionsLegacy.test(sentence)) ambiguous.clear();
      const fact = factFrom(sentence, legacyName, subject, ambiguous, turn.turnIndex);
      const other = subject.mentionsOther.exec(sentence);
      if (other) for (const p of pronounsFor(other[1].toLowerCase())) ambiguous.add(p);
      if (!fact || isDuplicate(fact.content, known)) continue;
      facts.push(fact);
      known.push(fact.content);
    }
  }
  return facts.slice(0, 30);
}

function factFrom(
  sentence: string,
  legacyName: string,
  subject: Subject,
  ambiguous: ReadonlySet<Pronoun>,
  turnIndex: number,
): LegacyFact | null {
  if (sentence.length < 8 || sentence.length > MAX_SENTENCE_CHARS) return null;
  if (isQuestion(sentence) || isLogistics(sentence)) return null;
  let category: FactCategory | null = null;
  let pronoun = false;
  let content: string;

  if (subject.favourite.test(sentence)) {
    category = 'PREFERENCE';
    content = sentence.replace(/^.*?\b(his|her|[\w ]+'s) (favou?rite)/i, `${legacyName}'s $2`);
  } else {
    const m = subject.pattern.exec(sentence);
    if (!m) return null;
    const word = m[1].toLowerCase();
    pronoun = word === 'he' || word === 'she';
    if (pronoun && ambiguous.has(word as Pronoun)) return null;
    const rest = sentence.slice(m[0].length);
    const lowerRest = rest.toLowerCase();
    for (const rule of VERB_RULES) {
      if (!rule.pattern.test(lowerRest)) continue;
      category = rule.refine ? rule.refine(lowerRest) : rule.category;
      break;
    }
    if (!category) return null;
    content = `${legacyName} ${rest}`;
  }

  let confidence = FACT_CONFIDENCE[category] - (pronoun ? PRONOUN_PENALTY : 0);
  if (isHedged(sentence)) confidence -= HEDGE_PENALTY;
  if (isMedicalOrFinancial(sentence)) confidence = Math.min(confidence, SENSITIVE_CAP);
  content = trimEndOf(content, (c) => /[\s,;:]/.test(c));
  if (!/[.!]$/.test(content)) content += '.';
  return {
    content: content.slice(0, 500),
    category,
    confidence: round2(confidence),
    sourceTurnIndexes: [turnIndex],
  };
}
