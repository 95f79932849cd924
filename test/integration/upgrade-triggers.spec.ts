import { DataSource } from 'typeorm';
import { MetricRow, MetricsRepository } from '../../src/search/metrics.repository.js';
import { RetrievalMetricsService } from '../../src/search/retrieval-metrics.service.js';
import { startTestApp, TestApp } from '../support/test-app.js';

/**
 * The upgrade triggers of memoryMetricsReport over metrics rows and model calls of known
 * values in a past fortnight: each share, the latency percentile, the spend share and the
 * complaints per week, against configured thresholds. Rows outside the period, recalls and
 * debug runs are left out.
 */
describe('upgrade triggers over the metrics rows', () => {
  let t: TestApp;
  let ds: DataSource;
  const from = new Date('2026-03-01T00:00:00Z');
  const to = new Date('2026-03-15T00:00:00Z');

  const row = (over: Partial<MetricRow>): MetricRow => ({
    operation: 'REPLY',
    userId: null,
    legacyId: null,
    conversationId: null,
    hybrid: true,
    fusion: 'weighted',
    hits: { dense: 5, lexical: 5, trigram: 0, time: 0 },
    bySource: { segment: 5, summary: 0, fact: 0, memory: 0 },
    goodHits: 3,
    fallback: false,
    widened: false,
    widenReason: null,
    timeFiltered: false,
    degraded: [],
    failedStage: null,
    items: 2,
    itemsBySource: { TURN: 1, SUMMARY: 1 },
    tokens: 100,
    budget: 1000,
    truncated: false,
    embedMs: 5,
    searchMs: 20,
    totalMs: 100,
    queryTokens: 5,
    queryText: null,
    pathMs: { dense: 3, lexical: 8, trigram: 0, fusion: 1 },
    topSimilarities: [0.8, 0.5],
    memoryHoldout: false,
    forgotComplaint: false,
    ...over,
  });

  async function insertAt(at: Date, r: MetricRow) {
    await t.app.get(MetricsRepository, { strict: false }).insert(r);
    // The newest row is the one just written (created_at defaults to now()).
    await ds.query(
      `UPDATE retrieval_metrics SET created_at = $1
        WHERE id = (SELECT id FROM retrieval_metrics WHERE created_at > now() - interval '1 hour'
                     ORDER BY created_at DESC LIMIT 1)`,
      [at],
    );
  }

  async function modelCall(task: string, tokens: number, at: Date) {
    await ds.query(
      `INSERT INTO model_calls (task, model, prompt_tokens, completion_tokens, duration_ms,
                                attempts, ok, created_at)
       VALUES ($1, 'test', $2, 0, 1, 1, true, $3)`,
      [task, tokens, at],
    );
  }

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      TRIGGER_MIN_ASSEMBLIES: '10',
      TRIGGER_P95_LATENCY_MS: '2000',
    });
    ds = t.app.get(DataSource);
    const inside = new Date('2026-03-05T12:00:00Z');
    // Ten assemblies: 4 with under 3 full-text hits, 6 on the fallback, 3 summaries only,
    // 5 truncated, one slow (p95 lands between 100 and 5000 ms), 7 complaints.
    for (let i = 0; i < 10; i++) {
      await insertAt(
        inside,
        row({
          operation: i % 2 === 0 ? 'REPLY' : 'CONTEXT',
          hits: { dense: 5, lexical: i < 4 ? 2 : 3, trigram: 0, time: 0 },
          fallback: i < 6,
          itemsBySource: i < 3 ? { SUMMARY: 1, PERIOD_SUMMARY: 1 } : { TURN: 1, SUMMARY: 1 },
          truncated: i < 5,
          totalMs: i === 9 ? 5000 : 100,
          forgotComplaint: i < 7,
          memoryHoldout: i < 2,
        }),
      );
    }
    // Not counted: an empty context is not "summaries only"; recalls, debug runs and rows
    // outside the period never count.
    await insertAt(
      new Date('2026-02-20T00:00:00Z'),
      row({ fallback: true, forgotComplaint: true }),
    );
    await insertAt(inside, row({ operation: 'RECALL', fallback: true, forgotComplaint: true }));
    await insertAt(inside, row({ operation: 'DEBUG', fallback: true, forgotComplaint: true }));
    await modelCall('summarizeTurns', 200, inside);
    await modelCall('summarizePeriod', 100, inside);
    await modelCall('reply', 700, inside);
    await modelCall('embed', 10_000, inside);
    await modelCall('summarizeTurns', 5000, new Date('2026-04-01T00:00:00Z'));
  });
  afterAll(() => t.close());

  it('evaluates each trigger from the period’s rows', async () => {
    const r = await t.app.get(RetrievalMetricsService, { strict: false }).report(from, to);
    expect(r.assemblies).toBe(10);
    expect(r.fewFullTextShare).toBeCloseTo(0.4);
    expect(r.summariesOnlyShare).toBeCloseTo(0.3);
    expect(r.complaints).toBe(7);
    expect(r.holdoutShare).toBeCloseTo(0.2);
    expect(r.meanTopSimilarity).toBeCloseTo(0.8);
    expect(r.lexicalP95Ms).toBeCloseTo(8);
    expect(r).toMatchObject({ summaryTokens: 300, modelTokens: 1000 });
    const byName = Object.fromEntries(r.triggers.map((x) => [x.name, x]));
    expect(byName.FEW_FULL_TEXT_HITS).toMatchObject({ threshold: 0.3, fires: true });
    expect(byName.FALLBACK.value).toBeCloseTo(0.6);
    expect(byName.FALLBACK.fires).toBe(true);
    expect(byName.SUMMARIES_ONLY).toMatchObject({ threshold: 0.2, fires: true });
    expect(byName.TRUNCATION.value).toBeCloseTo(0.5);
    expect(byName.TRUNCATION.fires).toBe(true);
    // percentile_cont over nine 100s and one 5000: 100 + 0.55 × 4900.
    expect(byName.P95_LATENCY.value).toBeCloseTo(2795);
    expect(byName.P95_LATENCY).toMatchObject({ threshold: 2000, fires: true });
    expect(byName.SUMMARY_SPEND.value).toBeCloseTo(0.3);
    expect(byName.SUMMARY_SPEND.fires).toBe(true);
    // Seven complaints over two weeks.
    expect(byName.FORGOT_COMPLAINTS).toMatchObject({ value: 3.5, threshold: 3, fires: true });
  });

  it('fires no share on too few assemblies, but still counts complaints', async () => {
    const week = await t.app
      .get(RetrievalMetricsService, { strict: false })
      .report(new Date('2026-02-15T00:00:00Z'), new Date('2026-02-22T00:00:00Z'));
    expect(week.assemblies).toBe(1);
    const fired = week.triggers.filter((x) => x.fires).map((x) => x.name);
    expect(fired).toEqual([]);
    expect(week.triggers.find((x) => x.name === 'FALLBACK')).toMatchObject({
      value: 1,
      enoughData: false,
    });
    expect(week.triggers.find((x) => x.name === 'FORGOT_COMPLAINTS')).toMatchObject({
      value: 1,
      enoughData: true,
    });
  });
});
