/** How English and Chinese (and the common Japanese forms) name months, weekdays and numbers. */

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
export const MONTH_RE =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
export const WEEKDAYS = [
  'sunday',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
];
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  couple: 2,
  few: 3,
  several: 3,
};
const CJK_DIGITS: Record<string, number> = {
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
  十: 10,
};

/**
 * 1..12, or 0 for words that are more often verbs in lower case ("this may be", "mar"), unless
 * the caller knows from the words around it that a month is meant.
 */
export function monthIndex(name: string, lowerCaseVerbIsMonth = false): number {
  if (!lowerCaseVerbIsMonth && (name === 'may' || name === 'mar')) return 0;
  const key = name.toLowerCase().slice(0, 3);
  return MONTHS.findIndex((m) => m.startsWith(key)) + 1;
}

export function englishNumber(raw: string): number {
  const n = Number(raw);
  return Number.isFinite(n) ? n : (NUMBER_WORDS[raw.toLowerCase()] ?? NaN);
}

/** 3, 十, 十二, 二十一 (up to 99). */
export function chineseNumber(raw: string): number {
  if (/^\d+$/.test(raw)) return Number(raw);
  if (raw === '十') return 10;
  const ten = raw.indexOf('十');
  if (ten === -1) return raw.length === 1 ? (CJK_DIGITS[raw] ?? NaN) : NaN;
  const tens = ten === 0 ? 1 : CJK_DIGITS[raw.slice(0, ten)];
  const ones = ten === raw.length - 1 ? 0 : CJK_DIGITS[raw.slice(ten + 1)];
  return tens * 10 + ones;
}

export const ORDINAL_WEEKS: Record<string, number> = {
  first: 1,
  '1st': 1,
  second: 2,
  '2nd': 2,
  third: 3,
  '3rd': 3,
  fourth: 4,
  '4th': 4,
};
