import { ConfigParseError, duration } from './config-spec.js';

describe('duration', () => {
  const parse = duration('1m', '365d');

  it('reads a number with a unit, in milliseconds', () => {
    expect(parse('14d')).toBe(14 * 24 * 60 * 60 * 1000);
    expect(parse('24h')).toBe(24 * 60 * 60 * 1000);
    expect(parse(' 90 s ')).toBe(90_000);
    expect(parse('15M')).toBe(15 * 60 * 1000);
    expect(parse('2w')).toBe(14 * 24 * 60 * 60 * 1000);
    expect(parse('60000')).toBe(60_000);
  });

  it('refuses what is not a duration', () => {
    for (const raw of ['', 'abc', '14 days', '-1d', '1.5h', '3y', 'd']) {
      expect(() => parse(raw)).toThrow(ConfigParseError);
    }
    expect(() => parse('soon')).toThrow('must be a duration such as 90s, 15m, 24h or 14d');
  });

  it('keeps within its bounds', () => {
    expect(() => parse('59s')).toThrow('must be between 1m and 365d');
    expect(() => parse('366d')).toThrow('must be between 1m and 365d');
    expect(parse('1m')).toBe(60_000);
    expect(parse('365d')).toBe(365 * 24 * 60 * 60 * 1000);
  });
});
