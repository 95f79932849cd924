import {
  addDays,
  dayStartsAt,
  dueDay,
  isDue,
  isLocalDay,
  isPeriodStart,
  isoWeekday,
  localDayOf,
  overlapDays,
  periodEndOf,
  periodStartOf,
  periodsTouching,
} from './period-calendar.js';

describe('period calendar', () => {
  it('numbers ISO weeks from Monday, across month and year ends', () => {
    expect(isoWeekday('2026-11-23')).toBe(1);
    expect(isoWeekday('2026-11-29')).toBe(7);
    expect(periodStartOf('WEEK', '2026-11-29')).toBe('2026-11-23');
    // 2027-01-01 is a Friday: its ISO week began in 2026.
    expect(periodStartOf('WEEK', '2027-01-01')).toBe('2026-12-28');
    expect(periodEndOf('WEEK', '2026-12-28')).toBe('2027-01-03');
  });

  it('knows month lengths, leap years included', () => {
    expect(periodEndOf('MONTH', '2028-02-01')).toBe('2028-02-29');
    expect(periodEndOf('MONTH', '2027-02-01')).toBe('2027-02-28');
    expect(periodEndOf('YEAR', '2026-01-01')).toBe('2026-12-31');
    expect(periodStartOf('MONTH', '2026-03-17')).toBe('2026-03-01');
    expect(periodStartOf('YEAR', '2026-03-17')).toBe('2026-01-01');
  });

  it('validates calendar dates and period starts', () => {
    expect(isLocalDay('2026-02-30')).toBe(false);
    expect(isLocalDay('2026-2-3')).toBe(false);
    expect(isLocalDay('2028-02-29')).toBe(true);
    expect(isPeriodStart('WEEK', '2026-11-23')).toBe(true);
    expect(isPeriodStart('WEEK', '2026-11-24')).toBe(false);
    expect(isPeriodStart('MONTH', '2026-11-01')).toBe(true);
    expect(isPeriodStart('YEAR', '2026-02-01')).toBe(false);
  });

  it('makes a month wait for the last week that touches it', () => {
    expect(dueDay('WEEK', '2026-11-23')).toBe('2026-11-30');
    // November 2026 ends on a Monday: its last week runs to Sunday 6 December.
    expect(dueDay('MONTH', '2026-11-01')).toBe('2026-12-07');
    // May 2026 ends on a Sunday: due the next day.
    expect(dueDay('MONTH', '2026-05-01')).toBe('2026-06-01');
    expect(dueDay('YEAR', '2026-01-01')).toBe('2027-01-04');
  });

  it('finds the weeks a month touches and the days they share', () => {
    expect(periodsTouching('WEEK', '2026-11-01', '2026-11-30')).toEqual([
      '2026-10-26',
      '2026-11-02',
      '2026-11-09',
      '2026-11-16',
      '2026-11-23',
      '2026-11-30',
    ]);
    expect(overlapDays('2026-10-26', '2026-11-01', '2026-11-01', '2026-11-30')).toBe(1);
    expect(overlapDays('2026-11-30', '2026-12-06', '2026-11-01', '2026-11-30')).toBe(1);
    expect(overlapDays('2026-11-02', '2026-11-08', '2026-12-01', '2026-12-31')).toBe(0);
  });

  it('turns local days into instants in zones east and west of UTC, across DST', () => {
    // Auckland is UTC+13 in summer (from late September), UTC+12 in winter.
    expect(dayStartsAt('2026-11-30', 'Pacific/Auckland').toISOString()).toBe(
      '2026-11-29T11:00:00.000Z',
    );
    expect(dayStartsAt('2026-07-01', 'Pacific/Auckland').toISOString()).toBe(
      '2026-06-30T12:00:00.000Z',
    );
    // Los Angeles leaves daylight saving on 1 November 2026.
    expect(dayStartsAt('2026-11-01', 'America/Los_Angeles').toISOString()).toBe(
      '2026-11-01T07:00:00.000Z',
    );
    expect(dayStartsAt('2026-11-02', 'America/Los_Angeles').toISOString()).toBe(
      '2026-11-02T08:00:00.000Z',
    );
    // Santiago's clocks jump from 00:00 to 01:00 on 7 September 2025: the day begins at 01:00.
    expect(dayStartsAt('2025-09-07', 'America/Santiago').toISOString()).toBe(
      '2025-09-07T04:00:00.000Z',
    );
    expect(localDayOf(dayStartsAt('2025-09-07', 'America/Santiago'), 'America/Santiago')).toBe(
      '2025-09-07',
    );
    expect(localDayOf(new Date('2026-11-29T10:59:59Z'), 'Pacific/Auckland')).toBe('2026-11-29');
    expect(localDayOf(new Date('2026-11-29T11:00:00Z'), 'Pacific/Auckland')).toBe('2026-11-30');
  });

  it('says a week is due when it has ended in the member’s own zone', () => {
    const week = '2026-11-23';
    const endsUtc = new Date('2026-11-30T00:00:00Z');
    expect(isDue('WEEK', week, 'UTC', endsUtc)).toBe(true);
    expect(isDue('WEEK', week, 'UTC', new Date(endsUtc.getTime() - 1))).toBe(false);
    // Auckland's Monday came 13 hours earlier; Los Angeles' 8 hours later.
    expect(isDue('WEEK', week, 'Pacific/Auckland', new Date('2026-11-29T11:00:00Z'))).toBe(true);
    expect(isDue('WEEK', week, 'America/Los_Angeles', new Date('2026-11-30T07:59:59Z'))).toBe(
      false,
    );
    expect(isDue('WEEK', week, 'America/Los_Angeles', new Date('2026-11-30T08:00:00Z'))).toBe(true);
    expect(addDays(week, 7)).toBe('2026-11-30');
  });
});
