import { meanDifference, proportionDifference, wilsonInterval } from './uplift-statistics.js';

const close = (actual: number, expected: number) => expect(actual).toBeCloseTo(expected, 3);

describe('wilsonInterval', () => {
  it('matches the textbook values', () => {
    // 81 of 263: 0.2553 to 0.3662 (Newcombe 1998, table I).
    const i = wilsonInterval(81, 263)!;
    close(i.low, 0.2553);
    close(i.high, 0.3662);
  });

  it('stays within [0, 1] at the edges', () => {
    const zero = wilsonInterval(0, 10)!;
    expect(zero.low).toBe(0);
    close(zero.high, 0.2775);
    const all = wilsonInterval(10, 10)!;
    close(all.low, 0.7225);
    close(all.high, 1);
  });

  it('is null without trials', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('proportionDifference (Newcombe hybrid score)', () => {
  it('matches Newcombe 1998, example (a): 56/70 against 48/80', () => {
    const r = proportionDifference({ successes: 56, trials: 70 }, { successes: 48, trials: 80 })!;
    close(r.difference, 0.2);
    close(r.interval.low, 0.0524);
    close(r.interval.high, 0.3339);
  });

  it('matches example (e): 0/10 against 0/20', () => {
    const r = proportionDifference({ successes: 0, trials: 10 }, { successes: 0, trials: 20 })!;
    expect(r.difference).toBe(0);
    close(r.interval.low, -0.1611);
    close(r.interval.high, 0.2775);
  });

  it('is null when an arm is empty', () => {
    expect(proportionDifference({ successes: 1, trials: 2 }, { successes: 0, trials: 0 })).toBe(
      null,
    );
  });
});

describe('meanDifference', () => {
  it('uses the normal approximation with unequal variances', () => {
    const r = meanDifference({ n: 50, mean: 12, variance: 16 }, { n: 40, mean: 10, variance: 9 })!;
    expect(r.difference).toBe(2);
    const se = Math.sqrt(16 / 50 + 9 / 40);
    close(r.interval.low, 2 - 1.96 * se);
    close(r.interval.high, 2 + 1.96 * se);
  });

  it('is null with fewer than two values in an arm', () => {
    expect(meanDifference({ n: 1, mean: 3, variance: 0 }, { n: 5, mean: 2, variance: 1 })).toBe(
      null,
    );
  });
});
