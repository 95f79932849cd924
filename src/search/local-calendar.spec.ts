import { startOfLocalDay } from './local-calendar.js';

describe('startOfLocalDay', () => {
  it('finds local midnight across a daylight-saving change', () => {
    expect(startOfLocalDay({ year: 2024, month: 3, day: 31 }, 'Europe/Paris').toISOString()).toBe(
      '2024-03-30T23:00:00.000Z',
    );
    expect(startOfLocalDay({ year: 2024, month: 4, day: 1 }, 'Europe/Paris').toISOString()).toBe(
      '2024-03-31T22:00:00.000Z',
    );
  });
});
