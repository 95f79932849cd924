import { localDate, startOfLocalDay } from '../search/local-calendar.js';
import type { SummaryPeriodName } from '../llm/language-model.js';

/**
 * Calendar arithmetic on local dates ('YYYY-MM-DD') in a member's time zone. Dates are
 * calendar days, not instants: arithmetic runs on UTC midnights so that no daylight-saving
 * change can move a day; instants come only from `startOfLocalDay` with the member's zone.
 */
export type LocalDay = string;

const DAY_MS = 86_400_000;
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

function toUtc(day: LocalDay): number {
  const m = DAY_RE.exec(day);
  if (!m) throw new RangeError(`not a local date: ${day}`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

function fromUtc(ms: number): LocalDay {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A real calendar date written YYYY-MM-DD (2026-02-30 is not one). */
export function isLocalDay(value: string): boolean {
  const m = DAY_RE.exec(value);
  if (!m) return false;
  return fromUtc(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) === value;
}

export function addDays(day: LocalDay, days: number): LocalDay {
  return fromUtc(toUtc(day) + days * DAY_MS);
}

/** Days from `a` to `b` (b - a). */
export function daysBetween(a: LocalDay, b: LocalDay): number {
  return Math.round((toUtc(b) - toUtc(a)) / DAY_MS);
}

/** 1 (Monday) .. 7 (Sunday), as ISO 8601 numbers them. */
export function isoWeekday(day: LocalDay): number {
  return ((new Date(toUtc(day)).getUTCDay() + 6) % 7) + 1;
}

/** The first day of the period that holds `day`: ISO weeks begin on Monday. */
export function periodStartOf(period: SummaryPeriodName, day: LocalDay): LocalDay {
  if (period === 'WEEK') return addDays(day, 1 - isoWeekday(day));
  if (period === 'MONTH') return `${day.slice(0, 7)}-01`;
  return `${day.slice(0, 4)}-01-01`;
}

/** The period's last day (included). */
export function periodEndOf(period: SummaryPeriodName, start: LocalDay): LocalDay {
  return addDays(nextPeriodStart(period, start), -1);
}

export function nextPeriodStart(period: SummaryPeriodName, start: LocalDay): LocalDay {
  if (period === 'WEEK') return addDays(start, 7);
  const d = new Date(toUtc(start));
  if (period === 'MONTH') return fromUtc(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  return fromUtc(Date.UTC(d.getUTCFullYear() + 1, 0, 1));
}

export function isPeriodStart(period: SummaryPeriodName, day: LocalDay): boolean {
  return isLocalDay(day) && periodStartOf(period, day) === day;
}

/**
 * The local day from which the period can be summarized. A week: the day after it. A month
 * or a year is built from the weeks that touch it, so it waits for the last of them to end
 * (at most six days after the month itself).
 */
export function dueDay(period: SummaryPeriodName, start: LocalDay): LocalDay {
  const end = periodEndOf(period, start);
  if (period === 'WEEK') return addDays(end, 1);
  return addDays(periodStartOf('WEEK', end), 7);
}

/** The instant a local day begins in a time zone (daylight-saving changes included). */
export function dayStartsAt(day: LocalDay, timeZone: string): Date {
  const [year, month, date] = day.split('-').map(Number);
  return startOfLocalDay({ year, month, day: date }, timeZone);
}

const knownZones = new Set<string>(['UTC']);

/** The member's zone, or UTC when it is not one this runtime knows. */
export function zoneOrUtc(zone: string): string {
  if (knownZones.has(zone)) return zone;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    if (knownZones.size < 1000) knownZones.add(zone);
    return zone;
  } catch {
    return 'UTC';
  }
}

export function localDayOf(instant: Date, timeZone: string): LocalDay {
  const d = localDate(instant, timeZone);
  return fromUtc(Date.UTC(d.year, d.month - 1, d.day));
}

export function isDue(
  period: SummaryPeriodName,
  start: LocalDay,
  timeZone: string,
  now: Date,
): boolean {
  return dayStartsAt(dueDay(period, start), timeZone).getTime() <= now.getTime();
}

/** Days two inclusive ranges share. */
export function overlapDays(
  aFrom: LocalDay,
  aTo: LocalDay,
  bFrom: LocalDay,
  bTo: LocalDay,
): number {
  const from = aFrom > bFrom ? aFrom : bFrom;
  const to = aTo < bTo ? aTo : bTo;
  return to < from ? 0 : daysBetween(from, to) + 1;
}

/** Starts of the periods that touch the inclusive range [from, to], in order. */
export function periodsTouching(
  period: SummaryPeriodName,
  from: LocalDay,
  to: LocalDay,
): LocalDay[] {
  const out: LocalDay[] = [];
  for (let s = periodStartOf(period, from); s <= to; s = nextPeriodStart(period, s)) out.push(s);
  return out;
}

/** The shorter period a period is built from. */
export function childPeriod(period: SummaryPeriodName): SummaryPeriodName | null {
  return period === 'YEAR' ? 'MONTH' : period === 'MONTH' ? 'WEEK' : null;
}
