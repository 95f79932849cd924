import {
  evaluateTriggers,
  periodWeeks,
  TriggerInputs,
  TriggerThresholds,
} from './upgrade-triggers.js';

const thresholds: TriggerThresholds = {
  fullTextMinHits: 3,
  fewFullTextShare: 0.3,
  fallbackShare: 0.5,
  summariesOnlyShare: 0.2,
  truncationShare: 0.4,
  p95LatencyMs: 3000,
  summarySpendShare: 0.25,
  forgotPerWeek: 3,
  minAssemblies: 20,
};

const quiet: TriggerInputs = {
  assemblies: 100,
  fewFullTextShare: 0.1,
  fallbackShare: 0.1,
  summariesOnlyShare: 0.05,
  truncationShare: 0.1,
  p95Ms: 800,
  summaryTokens: 100,
  modelTokens: 1000,
  complaints: 1,
  periodDays: 7,
};

const fired = (inputs: TriggerInputs, t = thresholds) =>
  evaluateTriggers(inputs, t)
    .filter((e) => e.fires)
    .map((e) => e.name);

describe('evaluateTriggers', () => {
  it('fires nothing on a healthy week, and reports every trigger', () => {
    const all = evaluateTriggers(quiet, thresholds);
    expect(all.map((e) => e.name)).toEqual([
      'FEW_FULL_TEXT_HITS',
      'FALLBACK',
      'SUMMARIES_ONLY',
      'TRUNCATION',
      'P95_LATENCY',
      'SUMMARY_SPEND',
      'FORGOT_COMPLAINTS',
    ]);
    expect(all.every((e) => !e.fires && e.enoughData)).toBe(true);
    expect(all.find((e) => e.name === 'SUMMARY_SPEND')!.value).toBeCloseTo(0.1);
  });

  it('fires each trigger strictly over its threshold', () => {
    expect(
      fired({
        ...quiet,
        fewFullTextShare: 0.31,
        fallbackShare: 0.51,
        summariesOnlyShare: 0.21,
        truncationShare: 0.41,
        p95Ms: 3001,
        summaryTokens: 260,
        complaints: 4,
      }),
    ).toEqual([
      'FEW_FULL_TEXT_HITS',
      'FALLBACK',
      'SUMMARIES_ONLY',
      'TRUNCATION',
      'P95_LATENCY',
      'SUMMARY_SPEND',
      'FORGOT_COMPLAINTS',
    ]);
    expect(fired({ ...quiet, fallbackShare: 0.5, p95Ms: 3000, complaints: 3 })).toEqual([]);
  });

  it('holds shares back on too few assemblies, but never the complaint count', () => {
    const few = { ...quiet, assemblies: 5, fallbackShare: 1, complaints: 10 };
    expect(fired(few)).toEqual(['FORGOT_COMPLAINTS']);
    expect(evaluateTriggers(few, thresholds)[1]).toMatchObject({ enoughData: false });
  });

  it('no model spend is not a share of anything', () => {
    const none = evaluateTriggers({ ...quiet, summaryTokens: 0, modelTokens: 0 }, thresholds);
    expect(none.find((e) => e.name === 'SUMMARY_SPEND')).toMatchObject({
      value: 0,
      enoughData: false,
      fires: false,
    });
  });

  it('counts complaints per week, a short period held to one week', () => {
    expect(periodWeeks(1)).toBe(1);
    expect(periodWeeks(14)).toBe(2);
    const month = evaluateTriggers({ ...quiet, complaints: 8, periodDays: 28 }, thresholds);
    expect(month.find((e) => e.name === 'FORGOT_COMPLAINTS')).toMatchObject({
      value: 2,
      fires: false,
    });
  });

  it('follows configured thresholds', () => {
    expect(fired({ ...quiet, p95Ms: 900 }, { ...thresholds, p95LatencyMs: 500 })).toEqual([
      'P95_LATENCY',
    ]);
  });
});
