import type { SummaryPeriod } from '../gql/graphql';

// Period dates are calendar days (YYYY-MM-DD) in the member's zone: read and shown as UTC days.
const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const monthFormat = new Intl.DateTimeFormat(undefined, {
  month: 'long',
  year: 'numeric',
  timeZone: 'UTC',
});
const shortMonth = new Intl.DateTimeFormat(undefined, { month: 'short', timeZone: 'UTC' });

const utc = (day: string) => new Date(`${day}T00:00:00Z`);

export function calendarDay(day: string): string {
  return dayFormat.format(utc(day));
}

/** "Week of 3 Mar 2025", "March 2025", "2025". */
export function periodName(period: SummaryPeriod, start: string): string {
  if (period === 'WEEK') return `Week of ${calendarDay(start)}`;
  if (period === 'MONTH') return monthFormat.format(utc(start));
  return start.slice(0, 4);
}

/** Jan … Dec, in the reader's language. */
export const MONTHS = Array.from({ length: 12 }, (_, i) =>
  shortMonth.format(new Date(Date.UTC(2000, i, 1))),
);

/** Today as YYYY-MM-DD (the reader's day). */
export function today(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
