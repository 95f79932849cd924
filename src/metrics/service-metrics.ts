import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReadObserver, ReadRoute } from '../database/database-reads.js';
import type { ReplicaStatus } from '../database/replica-set.js';

/** What the database-backed gauges show, read at most once per METRICS_DB_REFRESH_MS. */
export interface DatabaseSnapshot {
  /** Jobs by type and status (PENDING, RUNNING, FAILED). */
  jobs: { type: string; status: string; count: number }[];
  /** Seconds the oldest due PENDING job has waited (0 when none). */
  oldestDueJobSeconds: number;
  /** Rows per embedding kind still without a vector for the configured model. */
  embeddingBacklog: { kind: string; missing: number }[];
}

export type JobOutcome = 'succeeded' | 'retried' | 'failed' | 'deferred';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The service's Prometheus metrics, one registry per application (never prom-client's global
 * one: tests start several applications in one process). Created before the Nest container so
 * that the GraphQL options (the operation plugin, graphql-ws hooks) can count into it.
 * Labels are bounded: root fields of the schema, job types, model tasks, error codes.
 */
export class ServiceMetrics implements ReadObserver {
  readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'type' | 'outcome'>;
  private readonly requestSeconds: Histogram<'operation' | 'type'>;
  private readonly subscriptions: Gauge;
  private readonly jobRuns: Counter<'type' | 'outcome'>;
  private readonly jobSeconds: Histogram<'type'>;
  private readonly modelCalls: Counter<'task' | 'model' | 'outcome'>;
  private readonly modelTokens: Counter<'task' | 'model' | 'kind'>;
  private readonly modelSeconds: Histogram<'task'>;
  private readonly reads: Counter<'route'>;
  private readonly replicaWait: Histogram;
  private replicaReader: (() => ReplicaStatus[]) | null = null;
  private reader: (() => Promise<DatabaseSnapshot>) | null = null;
  private backupReader: (() => Promise<Date | null>) | null = null;
  private snapshot: { at: number; value: Promise<DatabaseSnapshot> } | null = null;

  constructor(private readonly options: { defaultMetrics: boolean; databaseRefreshMs: number }) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'keepsake_graphql_requests_total',
      help: 'GraphQL operations by root field, type and outcome (ok or the first error code).',
      labelNames: ['operation', 'type', 'outcome'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'keepsake_graphql_request_duration_seconds',
      help: 'Time to answer a GraphQL operation over HTTP, by root field and type.',
      labelNames: ['operation', 'type'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.subscriptions = new Gauge({
      name: 'keepsake_graphql_subscriptions_active',
      help: 'GraphQL subscriptions currently open over graphql-ws on this instance.',
      registers,
    });
    this.jobRuns = new Counter({
      name: 'keepsake_job_runs_total',
      help: 'Job attempts run by this instance, by type and outcome (succeeded, retried, failed, deferred).',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.jobSeconds = new Histogram({
      name: 'keepsake_job_duration_seconds',
      help: 'Time a job attempt ran, by type.',
      labelNames: ['type'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.modelCalls = new Counter({
      name: 'keepsake_model_calls_total',
      help: 'Language- and embedding-model calls, by task, model and outcome (ok or error).',
      labelNames: ['task', 'model', 'outcome'],
      registers,
    });
    this.modelTokens = new Counter({
      name: 'keepsake_model_tokens_total',
      help: 'Model tokens, by task, model and kind (prompt or completion).',
      labelNames: ['task', 'model', 'kind'],
      registers,
    });
    this.modelSeconds = new Histogram({
      name: 'keepsake_model_call_duration_seconds',
      help: 'Time a model call took, retries included, by task.',
      labelNames: ['task'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.reads = new Counter({
      name: 'keepsake_database_reads_total',
      help: 'Read-only work routed (a statement, or a search or context assembly as a whole), by where it went: replica, primary (no replica configured), primary_no_replica (none in rotation), primary_replica_behind (none had replayed the reads fence within DATABASE_REPLICA_MAX_LAG_MS), primary_no_fence, primary_replica_failed (read again on the primary).',
      labelNames: ['route'],
      registers,
    });
    this.replicaWait = new Histogram({
      name: 'keepsake_database_replica_wait_seconds',
      help: 'Time a read took to find a replica that had replayed its fence (the fence itself included), or to give up.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    const replicas = () => this.replicaReader?.() ?? [];
    new Gauge({
      name: 'keepsake_database_replica_lag_seconds',
      help: 'How far behind the primary each replica was at its last check: how long ago the primary first wrote past what it has replayed (absent while unknown).',
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const r of replicas()) {
          if (r.lagMs !== null) this.set({ replica: r.name }, r.lagMs / 1000);
        }
      },
    });
    new Gauge({
      name: 'keepsake_database_replica_lag_bytes',
      help: "Bytes of WAL the primary had written past each replica's replayed position at its last check.",
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const r of replicas()) {
          if (r.lagBytes !== null) this.set({ replica: r.name }, r.lagBytes);
        }
      },
    });
    new Gauge({
      name: 'keepsake_database_replica_in_rotation',
      help: 'Whether each replica takes reads (1), or is out (0) with its state: lagging, down, not-standby or starting.',
      labelNames: ['replica', 'state'],
      registers,
      collect() {
        this.reset();
        for (const r of replicas()) {
          this.set({ replica: r.name, state: r.state }, r.state === 'in' ? 1 : 0);
        }
      },
    });
    const snapshot = () => this.databaseSnapshot();
    new Gauge({
      name: 'keepsake_jobs',
      help: 'Jobs in the queue (all instances), by type and status: PENDING, RUNNING, FAILED (kept failed).',
      labelNames: ['type', 'status'],
      registers,
      async collect() {
        this.reset();
        const s = await snapshot();
        for (const j of s?.jobs ?? []) this.set({ type: j.type, status: j.status }, j.count);
      },
    });
    new Gauge({
      name: 'keepsake_job_oldest_due_seconds',
      help: 'How long the oldest due PENDING job has waited, in seconds (0 when none).',
      registers,
      async collect() {
        this.set((await snapshot())?.oldestDueJobSeconds ?? 0);
      },
    });
    new Gauge({
      name: 'keepsake_embedding_backlog',
      help: 'Rows still without a vector for the configured embedding model, by kind.',
      labelNames: ['kind'],
      registers,
      async collect() {
        this.reset();
        for (const b of (await snapshot())?.embeddingBacklog ?? []) {
          this.set({ kind: b.kind }, b.missing);
        }
      },
    });
    const backupReader = () => this.backupReader;
    const lastBackup = () => this.backupReader?.() ?? Promise.resolve(null);
    new Gauge({
      name: 'keepsake_backup_age_seconds',
      help: 'Age of the newest whole scheduled backup in BACKUP_DIR (embedded database): +Inf before the first, so that an alert on its age fires then too.',
      registers,
      async collect() {
        if (!backupReader()) return;
        const at = await lastBackup();
        this.set(at ? Math.max(0, (Date.now() - at.getTime()) / 1000) : Infinity);
      },
    });
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the replica gauges read each replica's state from (with DATABASE_REPLICA_URLS). */
  readReplicasWith(reader: () => ReplicaStatus[]): void {
    this.replicaReader = reader;
  }

  databaseRead(route: ReadRoute, waitSeconds: number | null): void {
    this.reads.inc({ route });
    if (waitSeconds !== null) this.replicaWait.observe(waitSeconds);
  }

  /** Where the backup gauge reads the newest good backup's time from (the embedded database's). */
  readBackupWith(reader: () => Promise<Date | null>): void {
    this.backupReader = reader;
  }

  /** Where the database-backed gauges read from (set once the database is up). */
  readDatabaseWith(reader: () => Promise<DatabaseSnapshot>): void {
    this.reader = reader;
  }

  /** The text a scrape returns. */
  async scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  request(operation: string, type: string, outcome: string, seconds: number | null): void {
    this.requests.inc({ operation, type, outcome });
    if (seconds !== null) this.requestSeconds.observe({ operation, type }, seconds);
  }

  subscriptionOpened(): void {
    this.subscriptions.inc();
  }

  subscriptionClosed(): void {
    this.subscriptions.dec();
  }

  jobRun(type: string, outcome: JobOutcome, seconds: number): void {
    this.jobRuns.inc({ type, outcome });
    this.jobSeconds.observe({ type }, seconds);
  }

  modelCall(call: {
    task: string;
    model: string;
    ok: boolean;
    promptTokens: number;
    completionTokens: number;
    durationMs: number;
  }): void {
    const { task, model } = call;
    this.modelCalls.inc({ task, model, outcome: call.ok ? 'ok' : 'error' });
    this.modelTokens.inc({ task, model, kind: 'prompt' }, call.promptTokens);
    this.modelTokens.inc({ task, model, kind: 'completion' }, call.completionTokens);
    this.modelSeconds.observe({ task }, call.durationMs / 1000);
  }

  /**
   * The database gauges' figures, shared by the gauges of one scrape and reused for
   * METRICS_DB_REFRESH_MS: counting a large backlog is not free, and scrapes come often.
   * A failed read shows nothing for those gauges rather than failing the scrape.
   */
  private databaseSnapshot(): Promise<DatabaseSnapshot | null> {
    if (!this.reader) return Promise.resolve(null);
    const now = Date.now();
    if (!this.snapshot || now - this.snapshot.at > this.options.databaseRefreshMs) {
      const value = this.reader();
      this.snapshot = { at: now, value };
      // A failure is not cached: the next scrape tries again.
      value.catch(() => {
        if (this.snapshot?.value === value) this.snapshot = null;
      });
    }
    return this.snapshot.value.catch(() => null);
  }
}
