/**
 * Confidence intervals for comparing the A/B arms. 95% two-sided. Differences are always
 * "with memory" minus "holdout".
 */
export const Z_95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/** Wilson score interval of a proportion (sound at 0, 1 and small counts, unlike Wald's). */
export function wilsonInterval(successes: number, trials: number, z = Z_95): Interval | null {
  if (trials <= 0) return null;
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * Difference of two proportions with Newcombe's hybrid score interval (method 10), built from
 * each arm's Wilson interval. Null when an arm has no trials.
 */
export function proportionDifference(
  a: { successes: number; trials: number },
  b: { successes: number; trials: number },
  z = Z_95,
): { difference: number; interval: Interval } | null {
  const ia = wilsonInterval(a.successes, a.trials, z);
  const ib = wilsonInterval(b.successes, b.trials, z);
  if (!ia || !ib) return null;
  const pa = a.successes / a.trials;
  const pb = b.successes / b.trials;
  const d = pa - pb;
  return {
    difference: d,
    interval: {
      low: d - Math.sqrt((pa - ia.low) ** 2 + (ib.high - pb) ** 2),
      high: d + Math.sqrt((ia.high - pa) ** 2 + (pb - ib.low) ** 2),
    },
  };
}

/** Count, mean and sample variance of one arm's values. */
export interface Sample {
  n: number;
  mean: number;
  variance: number;
}

/**
 * Difference of two means with the normal approximation (Welch's standard error). Null when an
 * arm has fewer than two values: no variance to speak of.
 */
export function meanDifference(
  a: Sample,
  b: Sample,
  z = Z_95,
): { difference: number; interval: Interval } | null {
  if (a.n < 2 || b.n < 2) return null;
  const d = a.mean - b.mean;
  const se = Math.sqrt(a.variance / a.n + b.variance / b.n);
  return { difference: d, interval: { low: d - z * se, high: d + z * se } };
}
