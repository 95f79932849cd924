/**
 * Calendar dates in a time zone and arithmetic on them: what reading a period from text needs
 * before it can name instants.
 */

export interface LocalDate {
  year: number;
  /** 1..12 */
  month: number;
  day: number;
}

export const DAY_MS = 86_400_000;

/** Formatters per zone: making one costs about a tenth of a millisecond, using one far less. */
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

function cached(
  cache: Map<string, Intl.DateTimeFormat>,
  timeZone: string,
  make: () => Intl.DateTimeFormat,
): Intl.DateTimeFormat {
  let format = cache.get(timeZone);
  if (!format) {
    format = make();
    // Zones are few in practice; a bound keeps a flood of odd ones from growing it forever.
    if (cache.size > 1000) cache.clear();
    cache.set(timeZone, format);
  }
  return format;
}

/** The calendar date of an instant in a time zone. */
export function localDate(instant: Date, timeZone: string): LocalDate {
  const parts = cached(
    dateFormats,
    timeZone,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone,
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
      }),
  ).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return { year: get('year'), month: get('month'), day: get('day') };
}

/**
 * The instant a calendar date begins in a time zone: local midnight, or, where the clocks
 * jump forward at midnight (America/Santiago, America/Havana), the first instant after it.
 */
export function startOfLocalDay(date: LocalDate, timeZone: string): Date {
  const guess = Date.UTC(date.year, date.month - 1, date.day);
  let instant = guess;
  // Two passes settle daylight-saving transitions.
  for (let i = 0; i < 2; i++) {
    const seen = localDateTimeMs(new Date(instant), timeZone);
    instant -= seen - guess;
  }
  // Midnight skipped: the instant found is the evening before; the day begins at the jump.
  for (let step = 0; step < 4 && localDateTimeMs(new Date(instant), timeZone) < guess; step++) {
    instant += 3_600_000 - (localDateTimeMs(new Date(instant), timeZone) % 3_600_000);
  }
  return new Date(instant);
}

function localDateTimeMs(instant: Date, timeZone: string): number {
  const parts = cached(
    dateTimeFormats,
    timeZone,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
  ).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
}

/** Calendar arithmetic on local dates (no time zone involved). */
export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day) + days * DAY_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

export function addMonths(date: LocalDate, months: number): LocalDate {
  const index = date.year * 12 + (date.month - 1) + months;
  return { year: Math.floor(index / 12), month: (index % 12) + 1, day: 1 };
}

/** The same day of the month `months` away, clamped to that month's length. */
export function shiftMonths(date: LocalDate, months: number): LocalDate {
  const first = addMonths(date, months);
  const length = new Date(Date.UTC(first.year, first.month, 0)).getUTCDate();
  return { ...first, day: Math.min(date.day, length) };
}

export function weekday(date: LocalDate): number {
  return new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
}

/** Monday of the week holding `date`. */
export function startOfWeek(date: LocalDate): LocalDate {
  return addDays(date, -((weekday(date) + 6) % 7));
}

export function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
