import { toldPeriod } from './told-period.js';

describe('toldPeriod', () => {
  it('reads what a turn tells of against when it was said, in its author’s zone', () => {
    // Said on Monday 13 May 2024 at 01:00 in Auckland (still Sunday 12 May in UTC).
    const said = new Date('2024-05-12T13:00:00Z');
    const told = toldPeriod('I finished my screenplay last Friday!', said, 'Pacific/Auckland');
    expect(told?.from.toISOString()).toBe('2024-05-09T12:00:00.000Z');
    expect(told?.to.toISOString()).toBe('2024-05-10T12:00:00.000Z');
    expect(toldPeriod("I'll come over tomorrow", said, null)?.from.toISOString()).toBe(
      '2024-05-13T00:00:00.000Z',
    );
    expect(toldPeriod('We love camping.', said, 'UTC')).toBeNull();
  });
});
