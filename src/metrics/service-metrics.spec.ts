import { DatabaseSnapshot, ServiceMetrics } from './service-metrics.js';

const snapshot: DatabaseSnapshot = {
  jobs: [
    { type: 'summaries:summarize', status: 'PENDING', count: 3 },
    { type: 'summaries:summarize', status: 'FAILED', count: 1 },
  ],
  oldestDueJobSeconds: 12.5,
  embeddingBacklog: [{ kind: 'segment', missing: 40 }],
};

describe('ServiceMetrics', () => {
  it('renders counters and histograms in the Prometheus text format', async () => {
    const m = new ServiceMetrics({ defaultMetrics: false, databaseRefreshMs: 0 });
    m.request('recall', 'query', 'ok', 0.2);
    m.request('recall', 'query', 'RATE_LIMITED', 0.01);
    m.subscriptionOpened();
    m.subscriptionOpened();
    m.subscriptionClosed();
    m.jobRun('summaries:summarize', 'retried', 1.5);
    m.modelCall({
      task: 'reply',
      model: 'openai:gpt',
      ok: true,
      promptTokens: 120,
      completionTokens: 30,
      durationMs: 800,
    });
    const text = await m.scrape();
    expect(m.contentType).toContain('text/plain');
    expect(text).toContain(
      'keepsake_graphql_requests_total{operation="recall",type="query",outcome="ok"} 1',
    );
    expect(text).toContain(
      'keepsake_graphql_requests_total{operation="recall",type="query",outcome="RATE_LIMITED"} 1',
    );
    expect(text).toContain(
      'keepsake_graphql_request_duration_seconds_count{operation="recall",type="query"} 2',
    );
    expect(text).toContain('keepsake_graphql_subscriptions_active 1');
    expect(text).toContain(
      'keepsake_job_runs_total{type="summaries:summarize",outcome="retried"} 1',
    );
    expect(text).toContain(
      'keepsake_model_tokens_total{task="reply",model="openai:gpt",kind="prompt"} 120',
    );
    expect(text).toContain('keepsake_model_call_duration_seconds_sum{task="reply"} 0.8');
    // No reader yet: the database gauges are empty, not an error.
    expect(text).not.toMatch(/^keepsake_jobs\{/m);
    expect(text).not.toContain('process_cpu');
  });

  it('reads the database gauges once per refresh window, and never caches a failure', async () => {
    const m = new ServiceMetrics({ defaultMetrics: false, databaseRefreshMs: 60_000 });
    let reads = 0;
    let fail = true;
    m.readDatabaseWith(async () => {
      reads++;
      if (fail) throw new Error('database down');
      return snapshot;
    });
    const down = await m.scrape();
    expect(down).not.toMatch(/^keepsake_jobs\{/m);
    expect(down).toContain('keepsake_job_oldest_due_seconds 0');
    fail = false;
    const first = await m.scrape();
    expect(first).toContain('keepsake_jobs{type="summaries:summarize",status="PENDING"} 3');
    expect(first).toContain('keepsake_jobs{type="summaries:summarize",status="FAILED"} 1');
    expect(first).toContain('keepsake_job_oldest_due_seconds 12.5');
    expect(first).toContain('keepsake_embedding_backlog{kind="segment"} 40');
    const readsAfterFirst = reads;
    await m.scrape();
    expect(reads).toBe(readsAfterFirst);
  });

  it('keeps each application apart (its own registry)', async () => {
    const a = new ServiceMetrics({ defaultMetrics: false, databaseRefreshMs: 0 });
    const b = new ServiceMetrics({ defaultMetrics: false, databaseRefreshMs: 0 });
    a.request('me', 'query', 'ok', 0.01);
    expect(await b.scrape()).not.toContain('operation="me"');
  });
});
