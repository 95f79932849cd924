import {
  addDays,
  addMonths,
  DAY_MS,
  localDate,
  type LocalDate,
  shiftMonths,
  startOfLocalDay,
  startOfWeek,
  validDate,
  validTimeZone,
  weekday,
} from './local-calendar.js';
import {
  chineseNumber,
  englishNumber,
  MONTH_RE,
  monthIndex,
  ORDINAL_WEEKS,
  WEEKDAYS,
} from './time-words.js';

/** A period the query refers to: [from, to), as instants. */
export interface TimeRange {
  from: Date;
  to: Date;
  /** The words of the query that named it. */
  expression: string;
}

type Matcher = {
  re: RegExp;
  range: (m: RegExpExecArray, today: LocalDate) => [LocalDate, LocalDate] | null;
};

/** The latest occurrence of `month` at or before the clock's month. */
function latestMonth(month: number, today: LocalDate): number {
  return month <= today.month ? today.year : today.year - 1;
}

function monthRange(year: number, month: number): [LocalDate, LocalDate] {
  const from = { year, month, day: 1 };
  return [from, addMonths(from, 1)];
}

function dayRange(date: LocalDate): [LocalDate, LocalDate] {
  return [date, addDays(date, 1)];
}

function ago(n: number, unit: string, today: LocalDate): [LocalDate, LocalDate] | null {
  if (!Number.isFinite(n) || n < 0 || n > 1000) return null;
  if (/^(day|天|日)/.test(unit)) return dayRange(addDays(today, -n));
  if (/^(week|周|星期|礼拜)/.test(unit)) {
    const from = addDays(today, -7 * n);
    return [from, addDays(from, 7)];
  }
  if (/^(month|个月|月)/.test(unit)) {
    return [shiftMonths(today, -n), shiftMonths(today, 1 - n)];
  }
  const year = today.year - n;
  return [
    { year, month: 1, day: 1 },
    { year: year + 1, month: 1, day: 1 },
  ];
}

/** The period the first matcher finds in `text`, as local dates. */
function localRange(text: string, today: LocalDate): [LocalDate, LocalDate] | null {
  for (const matcher of MATCHERS) {
    const m = matcher.re.exec(text);
    const range = m && matcher.range(m, today);
    if (range) return range;
  }
  return null;
}

/** A month named with an optional year ("November", "Nov 2023"): its year and number. */
function namedMonth(name: string, year: string | undefined, today: LocalDate) {
  const month = monthIndex(name, true);
  if (!month) return null;
  return { year: year ? +year : latestMonth(month, today), month };
}

/**
 * Periods told relative to another ("the week before 16 November 2023", "the second week of
 * May", "early June 2022", "between August 11 and August 15"): matched before everything else,
 * so that the date inside is not taken for the whole.
 */
const COMPOUND: Matcher[] = [
  {
    re: /\bbetween\s+(.+?)\s+and\s+(.+?)(?=[?.!;]|$)/i,
    range: (m, today) => {
      // The first end is read as of the second ("between August 11 and August 15 2023").
      const end = localRange(m[2], today);
      const from = localRange(m[1], end ? end[0] : today);
      // "between August 11 and 15": the second end borrows the first one's month.
      const to =
        end ??
        (from && /^\d{1,2}(?:st|nd|rd|th)?$/.test(m[2].trim())
          ? dayRange({ ...from[0], day: parseInt(m[2], 10) })
          : null);
      if (!from || !to || !validDate(to[0].year, to[0].month, to[0].day)) return null;
      return [from[0], to[1]];
    },
  },
  {
    re: /\b(?:the\s+)?(day|week|weekend|month|year)\s+(before|after|prior\s+to|following)\s+(.+?)(?=[?.!;]|$)/i,
    range: (m, today) => {
      const anchor = localRange(m[3], today);
      if (!anchor) return null;
      const unit = m[1].toLowerCase();
      const before = /^(?:before|prior)/i.test(m[2]);
      if (unit === 'weekend') {
        // The Saturday and Sunday just before (or after) the anchor.
        const back = before ? (weekday(anchor[0]) + 1) % 7 || 7 : (6 - weekday(anchor[1]) + 7) % 7;
        const saturday = addDays(before ? anchor[0] : anchor[1], before ? -back : back);
        return [saturday, addDays(saturday, 2)];
      }
      const length = (span: LocalDate, sign: number) =>
        unit === 'day'
          ? addDays(span, sign)
          : unit === 'week'
            ? addDays(span, 7 * sign)
            : shiftMonths(span, sign * (unit === 'month' ? 1 : 12));
      return before ? [length(anchor[0], -1), anchor[0]] : [anchor[1], length(anchor[1], 1)];
    },
  },
  {
    re: new RegExp(
      `\\b(first|1st|second|2nd|third|3rd|fourth|4th|last)\\s+week\\s+of\\s+${MONTH_RE}\\b(?:,?\\s+(\\d{4}))?`,
      'i',
    ),
    range: (m, today) => {
      const named = namedMonth(m[2], m[3], today);
      if (!named) return null;
      const [start, end] = monthRange(named.year, named.month);
      if (m[1].toLowerCase() === 'last') return [addDays(end, -7), end];
      const from = addDays(start, 7 * (ORDINAL_WEEKS[m[1].toLowerCase()] - 1));
      return [from, addDays(from, 7)];
    },
  },
  {
    re: new RegExp(
      `\\b(beginning|start|early|middle|mid|end|late)(?:\\s+of|-)?\\s*${MONTH_RE}\\b(?:,?\\s+(\\d{4}))?`,
      'i',
    ),
    range: (m, today) => {
      const named = namedMonth(m[2], m[3], today);
      if (!named) return null;
      const [start, end] = monthRange(named.year, named.month);
      const part = m[1].toLowerCase();
      // Thirds of the month, as "early", "mid" and "late" are used.
      if (part === 'beginning' || part === 'start' || part === 'early') {
        return [start, addDays(start, 10)];
      }
      if (part === 'middle' || part === 'mid') return [addDays(start, 10), addDays(start, 20)];
      return [addDays(start, 20), end];
    },
  },
];

/** Future periods: what a turn plans ("I'll come over tomorrow", "next week"). */
const FUTURE: Matcher[] = [
  {
    re: /\b(?:the\s+)?day\s+after\s+tomorrow\b/i,
    range: (_m, today) => dayRange(addDays(today, 2)),
  },
  {
    re: /\btomorrow\b/i,
    range: (_m, today) => dayRange(addDays(today, 1)),
  },
  {
    re: /\bnext\s+weekend\b/i,
    range: (_m, today) => {
      const saturday = addDays(startOfWeek(today), 12);
      return [saturday, addDays(saturday, 2)];
    },
  },
  {
    re: /\bnext\s+(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/i,
    range: (m, today) => {
      const ahead = (WEEKDAYS.indexOf(m[1].toLowerCase()) - weekday(today) + 7) % 7 || 7;
      return dayRange(addDays(today, ahead));
    },
  },
  {
    re: /\bnext\s+week\b/i,
    range: (_m, today) => {
      const monday = addDays(startOfWeek(today), 7);
      return [monday, addDays(monday, 7)];
    },
  },
  {
    re: /\bnext\s+month\b/i,
    range: (_m, today) => monthRange(addMonths(today, 1).year, addMonths(today, 1).month),
  },
  {
    re: /\bnext\s+year\b/i,
    range: (_m, today) => [
      { year: today.year + 1, month: 1, day: 1 },
      { year: today.year + 2, month: 1, day: 1 },
    ],
  },
];

/**
 * Ordered most specific first: an explicit date beats a month, which beats a relative period.
 * English patterns are matched case-insensitively on word boundaries; Chinese (and the common
 * Japanese) forms need none.
 */
const MATCHERS: Matcher[] = [
  {
    // 2023-05-08
    re: /\b(\d{4})-(\d{2})-(\d{2})\b/,
    range: (m) =>
      validDate(+m[1], +m[2], +m[3]) ? dayRange({ year: +m[1], month: +m[2], day: +m[3] }) : null,
  },
  {
    // May 8, 2023 / May 8th 2023 / May 8
    re: new RegExp(`\\b${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?\\b`, 'i'),
    range: (m, today) => {
      const month = monthIndex(m[1]);
      if (!month) return null;
      const year = m[3] ? +m[3] : latestMonth(month, today);
      return validDate(year, month, +m[2]) ? dayRange({ year, month, day: +m[2] }) : null;
    },
  },
  {
    // 8 May 2023 / 8th of May / 8 May
    re: new RegExp(
      `\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\b(?:,?\\s+(\\d{4}))?`,
      'i',
    ),
    range: (m, today) => {
      const month = monthIndex(m[2]);
      if (!month) return null;
      const year = m[3] ? +m[3] : latestMonth(month, today);
      return validDate(year, month, +m[1]) ? dayRange({ year, month, day: +m[1] }) : null;
    },
  },
  {
    // 2023年5月8日 / 5月8号
    re: /(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]{1,3})月(\d{1,2}|[一二三四五六七八九十]{1,3})[日号]/,
    range: (m, today) => {
      const month = chineseNumber(m[2]);
      const day = chineseNumber(m[3]);
      const year = m[1] ? +m[1] : latestMonth(month, today);
      return validDate(year, month, day) ? dayRange({ year, month, day }) : null;
    },
  },
  {
    // in May 2023 / May of 2023 / May 2023
    re: new RegExp(`\\b${MONTH_RE}\\.?(?:,?\\s+of)?,?\\s+(\\d{4})\\b`, 'i'),
    range: (m) => (monthIndex(m[1]) ? monthRange(+m[2], monthIndex(m[1])) : null),
  },
  {
    // 2023年5月 / 五月
    re: /(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]{1,3})月份?(?![\d一二三四五六七八九十])/,
    range: (m, today) => {
      const month = chineseNumber(m[2]);
      if (!(month >= 1 && month <= 12)) return null;
      return monthRange(m[1] ? +m[1] : latestMonth(month, today), month);
    },
  },
  {
    // in May / during June / last May
    re: new RegExp(
      `\\b(?:in|during|since|until|last|this|of|early|late|mid|back in)\\s+(?:early\\s+|late\\s+|mid-?)?${MONTH_RE}\\b`,
      'i',
    ),
    range: (m, today) => {
      // After "in", "since", "during"... lower-case "may" is the month ("in may"); after
      // "this" it is the verb ("this may be wrong"), and before "be"/"have" it is too.
      const verbAfter = /^\s+(?:be|have|not|well|also|never)\b/i.test(
        m.input!.slice(m.index! + m[0].length),
      );
      const month = monthIndex(m[1], !/^this\b/i.test(m[0]) && !verbAfter);
      if (!month) return null;
      const last = /^last/i.test(m[0]);
      const year = latestMonth(month, today) - (last && month === today.month ? 1 : 0);
      return monthRange(year, month);
    },
  },
  {
    re: /\b(?:the\s+)?day\s+before\s+yesterday\b|前天|一昨日/i,
    range: (_m, today) => dayRange(addDays(today, -2)),
  },
  {
    re: /\b(?:yesterday|last\s+night)\b|昨天|昨晚|昨日/i,
    range: (_m, today) => dayRange(addDays(today, -1)),
  },
  {
    re: /\b(?:today|tonight|this\s+(?:morning|afternoon|evening)|earlier\s+today)\b|今天|今晚|今日/i,
    range: (_m, today) => dayRange(today),
  },
  {
    re: /\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple|few|several)\s+(?:of\s+)?(days?|weeks?|months?|years?)\s+ago\b/i,
    range: (m, today) => ago(englishNumber(m[1]), m[2].toLowerCase(), today),
  },
  {
    re: /(\d+|[一二两三四五六七八九十]{1,3})\s*(天|周|个?星期|个?礼拜|个月|年)(?:以)?前/,
    range: (m, today) => ago(chineseNumber(m[1]), m[2].replace(/^个/, ''), today),
  },
  {
    re: /\b(?:last|this\s+past)\s+weekend\b|上个?周末|上个?星期?末/i,
    range: (_m, today) => {
      const saturday = addDays(startOfWeek(today), -2);
      return [saturday, addDays(saturday, 2)];
    },
  },
  {
    re: /\bthis\s+weekend\b|这个?周末|本周末/i,
    range: (_m, today) => {
      const saturday = addDays(startOfWeek(today), 5);
      return [saturday, addDays(saturday, 2)];
    },
  },
  {
    re: /\b(?:last|on|this\s+past)\s+(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/i,
    range: (m, today) => {
      const target = WEEKDAYS.indexOf(m[1].toLowerCase());
      const back = (weekday(today) - target + 7) % 7 || 7;
      return dayRange(addDays(today, -back));
    },
  },
  {
    re: /\blast\s+week\b|上个?(?:周|星期|礼拜)(?!末)|先週/i,
    range: (_m, today) => {
      const monday = addDays(startOfWeek(today), -7);
      return [monday, addDays(monday, 7)];
    },
  },
  {
    re: /\bthis\s+week\b|这个?(?:周|星期|礼拜)(?!末)|本周|今週/i,
    range: (_m, today) => [startOfWeek(today), addDays(today, 1)],
  },
  {
    re: /\blast\s+month\b|上个?月|先月/i,
    range: (_m, today) => monthRange(addMonths(today, -1).year, addMonths(today, -1).month),
  },
  {
    re: /\bthis\s+month\b|这个月|本月|今月/i,
    range: (_m, today) => [{ ...today, day: 1 }, addDays(today, 1)],
  },
  {
    re: /\b(?:last|past)\s+year\b|去年|昨年/i,
    range: (_m, today) => [
      { year: today.year - 1, month: 1, day: 1 },
      { year: today.year, month: 1, day: 1 },
    ],
  },
  {
    re: /前年/,
    range: (_m, today) => [
      { year: today.year - 2, month: 1, day: 1 },
      { year: today.year - 1, month: 1, day: 1 },
    ],
  },
  {
    re: /\bthis\s+year\b|今年/i,
    range: (_m, today) => [{ year: today.year, month: 1, day: 1 }, addDays(today, 1)],
  },
  {
    re: /\b(?:recently|lately|these\s+days|the\s+other\s+day)\b|最近|近来/i,
    range: (_m, today) => [addDays(today, -30), addDays(today, 1)],
  },
  {
    re: /\b(?:in|during|since|of|back\s+in)\s+((?:19|20)\d{2})\b|((?:19|20)\d{2})年/i,
    range: (m) => {
      const year = +(m[1] ?? m[2]);
      return [
        { year, month: 1, day: 1 },
        { year: year + 1, month: 1, day: 1 },
      ];
    },
  },
];

/**
 * The period a query refers to ("last week", "in May", "yesterday", "3 days ago", 上个月,
 * 去年, ...), relative to `clock` (the conversation's time) in the user's time zone. Months
 * and dates without a year mean their latest occurrence up to the clock. Null when the query
 * names no time.
 */
export function parseTimeExpression(text: string, clock: Date, timeZone = 'UTC'): TimeRange | null {
  const zone = validTimeZone(timeZone) ? timeZone : 'UTC';
  const today = localDate(clock, zone);
  for (const matcher of [...COMPOUND, ...MATCHERS, ...FUTURE]) {
    const m = matcher.re.exec(text);
    if (!m) continue;
    const range = matcher.range(m, today);
    if (!range) continue;
    const from = startOfLocalDay(range[0], zone);
    const to = startOfLocalDay(range[1], zone);
    if (to <= from) continue;
    return { from, to, expression: m[0].trim() };
  }
  return null;
}

/**
 * How well an item's time fits the range: 1 inside, falling linearly to 0 at one range
 * length away (so "last week" still favours the days around it).
 */
export function timeMatch(range: TimeRange, from: Date | null, to: Date | null = from): number {
  if (!from || !to) return 0;
  const start = range.from.getTime();
  const end = range.to.getTime();
  if (to.getTime() >= start && from.getTime() < end) return 1;
  const span = Math.max(DAY_MS, end - start);
  const distance = from.getTime() >= end ? from.getTime() - end : start - to.getTime();
  return Math.max(0, 1 - distance / span);
}
