/**
 * Text rules for memories: the normalized form used for duplicate checks, and the
 * single-valued "slots" a memory sets, used to spot contradictions. Both are HEURISTIC and
 * deliberately narrow: a contradiction is only declared when two memories set the same slot
 * ("where the user lives", "how the user feels about jazz") to different values.
 */

/** Lower case, straight quotes, letters and digits only, single spaces. */
export function normalizeMemory(content: string): string {
  return content
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, ' ')
    .replace(/(^|\s)'+|'+(\s|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const CONTRACTIONS: [RegExp, string][] = [
  [/\bi'm\b/g, 'i am'],
  [/\bi've\b/g, 'i have'],
  [/\bi'd\b/g, 'i would'],
  [/\bdon't\b/g, 'do not'],
  [/\bdoesn't\b/g, 'does not'],
  [/\bcan't\b/g, 'cannot'],
  [/\bisn't\b/g, 'is not'],
];

/** Third-person phrasings (what language models write) mapped onto first person. */
const THIRD_PERSON: [RegExp, string][] = [
  [/\bthe user's\b/g, 'my'],
  [/\bthe user is\b/g, 'i am'],
  [/\bthe user has\b/g, 'i have'],
  [/\bthe user does not\b/g, 'i do not'],
  [/\bthe user no longer\b/g, 'i no longer'],
  [
    /\bthe user (now |currently |really |absolutely )?(live|work|love|like|enjoy|hate|dislike|prefer|adore|despise)s\b/g,
    'i $1$2',
  ],
  [/\bthe user\b/g, 'i'],
  [/\bthey are\b/g, 'i am'],
];

/** First-person canonical form of a normalized memory, for slot matching. */
export function canonicalFirstPerson(normalized: string): string {
  let s = ` ${normalized} `;
  for (const [pattern, replacement] of CONTRACTIONS) s = s.replace(pattern, replacement);
  for (const [pattern, replacement] of THIRD_PERSON) s = s.replace(pattern, replacement);
  return s.replace(/\s+/g, ' ').trim();
}

export interface MemorySlot {
  key: string;
  value: string;
}

const TRAILING_NOISE =
  /\s+(now|these days|nowadays|currently|at the moment|anymore|any more|too|as well|a lot|so much|very much)$/;

function cleanValue(raw: string): string {
  let v = raw.trim().replace(/^(the|a|an)\s+/, '');
  for (let i = 0; i < 3; i++) v = v.replace(TRAILING_NOISE, '');
  return v.trim();
}

interface SlotRule {
  pattern: RegExp;
  key: (m: RegExpExecArray) => string;
  value: (m: RegExpExecArray) => string;
}

const LIKE = '(?:really |absolutely |just |still )?(?:love|like|enjoy|adore|prefer)';
const DISLIKE =
  '(?:really |just |still )?(?:hate|dislike|despise|cannot stand|do not like|do not enjoy|do not love|never liked|no longer like|no longer enjoy|no longer love)';

const SLOT_RULES: SlotRule[] = [
  {
    pattern: /\bmy name is ([\p{L}' ]{1,60})$/u,
    key: () => 'name',
    value: (m) => m[1],
  },
  {
    pattern: /\bi (?:now |currently |still )?live in ([\p{L}\p{N}' ]{1,80})$/u,
    key: () => 'home',
    value: (m) => m[1],
  },
  {
    pattern: /\bi (?:now |currently |still )?work as ([\p{L}\p{N}' ]{1,80})$/u,
    key: () => 'occupation',
    value: (m) => m[1],
  },
  {
    pattern: /\bi (?:now |currently |still )?work (?:at|for) ([\p{L}\p{N}' ]{1,80})$/u,
    key: () => 'employer',
    value: (m) => m[1],
  },
  {
    pattern: /\bi am (\d{1,3}) years old\b/u,
    key: () => 'age',
    value: (m) => m[1],
  },
  {
    pattern: /\bi am (?:now )?(married|divorced|engaged|single|widowed|a widow|a widower)\b/u,
    key: () => 'marital status',
    value: (m) => m[1].replace(/^a /, ''),
  },
  {
    pattern: /\bmy (?:favourite|favorite|fave) ([\p{L}\p{N}' ]{1,40}?) is ([\p{L}\p{N}' ]{1,80})$/u,
    key: (m) => `favourite ${m[1].trim()}`,
    value: (m) => m[2],
  },
  {
    pattern: new RegExp(`\\bi ${DISLIKE} ([\\p{L}\\p{N}' ]{1,80})$`, 'u'),
    key: (m) => `feeling about ${cleanValue(m[1])}`,
    value: () => 'dislike',
  },
  {
    pattern: new RegExp(`\\bi ${LIKE} ([\\p{L}\\p{N}' ]{1,80})$`, 'u'),
    key: (m) => `feeling about ${cleanValue(m[1])}`,
    value: () => 'like',
  },
];

/**
 * The slot a memory sets, if it is one of the single-valued kinds above. A sentence that
 * names several things ("I live in Porto and work as a nurse") sets none: it is not clear
 * which one a later memory would contradict.
 */
export function slotOf(content: string): MemorySlot | null {
  const s = canonicalFirstPerson(normalizeMemory(content));
  if (/\b(and|but|or|because|although|while)\b/.test(s)) return null;
  for (const rule of SLOT_RULES) {
    const m = rule.pattern.exec(s);
    if (!m) continue;
    const value = cleanValue(rule.value(m));
    const key = rule.key(m).trim();
    if (!value || key.endsWith('about')) return null;
    return { key, value };
  }
  return null;
}
