import { isUuid } from '../common/validation/uuid.js';

/**
 * The fields of a member's profile: how each is stored, the sentence that stands for it (what
 * is embedded, recalled and given to the agent), its key in recall ids, and which questions
 * name it. Pure: no database, no framework.
 */

export type ProfileField =
  | 'preferredName'
  | 'pronouns'
  | 'birthday'
  | 'homeTown'
  | 'relationship'
  | 'languages'
  | 'interests'
  | 'conversationGoals'
  | 'notes';

/** Lists for languages and interests, a string for the rest (birthday: YYYY-MM-DD). */
export type ProfileValue = string | string[];

/** In the order the agent is given them, most useful first (how to address the person). */
export const PROFILE_FIELDS: readonly ProfileField[] = [
  'preferredName',
  'pronouns',
  'relationship',
  'languages',
  'homeTown',
  'birthday',
  'interests',
  'conversationGoals',
  'notes',
];

const LABELS: Record<ProfileField, string> = {
  preferredName: 'Preferred name',
  pronouns: 'Pronouns',
  birthday: 'Birthday',
  homeTown: 'Home town',
  relationship: 'Relationship to the person being remembered',
  languages: 'Languages',
  interests: 'Interests',
  conversationGoals: 'Wants from these conversations',
  notes: 'Notes',
};

/** Words of a question that name a field ("when is my birthday", "what are my hobbies"). */
const KEYWORDS: Record<ProfileField, readonly string[]> = {
  preferredName: ['name', 'called'],
  pronouns: ['pronoun', 'pronouns'],
  birthday: ['birthday', 'born', 'birthdate'],
  homeTown: ['hometown', 'town', 'grew', 'grow'],
  relationship: ['relationship', 'related', 'relation'],
  languages: ['language', 'languages', 'speak'],
  interests: ['interest', 'interests', 'hobby', 'hobbies', 'passion', 'passions'],
  conversationGoals: ['goal', 'goals', 'hope', 'hopes', 'want'],
  notes: ['note', 'notes'],
};

/** A field's name only counts when the question is about the speaker ("my name", not hers). */
const FIRST_PERSON = ['i', 'me', 'my', 'mine', 'myself', 'im'];

/** Questions about the whole profile ("what do you know about me"). */
const WHOLE_PROFILE = /\b(my profile|about me|about myself|who am i)\b/i;

export function isProfileField(value: string): value is ProfileField {
  return (PROFILE_FIELDS as readonly string[]).includes(value);
}

/** Whitespace collapsed and trimmed; blank becomes null (a cleared field). */
export function cleanText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const cleaned = value.replace(/\s+/g, ' ').trim();
  return cleaned === '' ? null : cleaned;
}

/** Long free text keeps its line breaks; blank becomes null. */
export function cleanParagraphs(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const cleaned = value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return cleaned === '' ? null : cleaned;
}

/** Items cleaned, blanks dropped, duplicates (ignoring case) kept once; empty becomes null. */
export function cleanList(values: readonly string[] | null | undefined): string[] | null {
  if (values === null || values === undefined) return null;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const cleaned = cleanText(value);
    if (!cleaned || seen.has(cleaned.toLowerCase())) continue;
    seen.add(cleaned.toLowerCase());
    out.push(cleaned);
  }
  return out.length > 0 ? out : null;
}

/** Whether a YYYY-MM-DD birthday is a real date between 1900 and `today`. */
export function isPlausibleBirthday(value: string, today: Date): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (date.toISOString().slice(0, 10) !== value) return false;
  return Number(m[1]) >= 1900 && date.getTime() <= today.getTime();
}

/** The sentence that stands for an entry: embedded, recalled, and shown to the agent. */
export function entryText(field: ProfileField, value: ProfileValue): string {
  const shown = Array.isArray(value) ? value.join(', ') : value;
  return `${LABELS[field]}: ${shown}`;
}

/** The key of an entry in recall ids: the field, and the legacy for a relationship. */
export function entryKey(field: ProfileField, legacyId: string | null): string {
  return field === 'relationship' && legacyId ? `relationship:${legacyId}` : field;
}

export function parseEntryKey(
  key: string,
): { field: ProfileField; legacyId: string | null } | null {
  const legacyId = key.startsWith('relationship:') ? key.slice('relationship:'.length) : null;
  if (legacyId !== null && isUuid(legacyId))
    return { field: 'relationship', legacyId: legacyId.toLowerCase() };
  if (key === 'relationship' || !isProfileField(key)) return null;
  return { field: key, legacyId: null };
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/**
 * How directly a question asks about an entry, 0..1: 1 when it asks about the whole profile
 * or names the field about the speaker, 0.8 when it names a word of the entry's value, else 0.
 */
export function keywordScore(query: string, field: ProfileField, value: ProfileValue): number {
  if (WHOLE_PROFILE.test(query)) return 1;
  const asked = words(query.replace(/['’]/g, ''));
  const aboutSpeaker = FIRST_PERSON.some((w) => asked.has(w));
  if (aboutSpeaker && KEYWORDS[field].some((k) => asked.has(k))) return 1;
  if (aboutSpeaker && field === 'homeTown' && /\bhome ?town\b/i.test(query)) return 1;
  const valueWords = words(Array.isArray(value) ? value.join(' ') : value);
  for (const w of valueWords) if (w.length >= 4 && asked.has(w)) return 0.8;
  return 0;
}
