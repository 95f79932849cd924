import { Logger } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { describeServer } from './database-url.js';
import type { ServerLocator } from './server-locator.js';
import { parseLsn, PositionHistory } from './wal-position.js';

export interface ReplicaSettings {
  /** A read waits this long for a replica; one further behind at a check is out of rotation. */
  maxLagMs: number;
  /** How often each replica is checked. */
  checkMs: number;
  /** How long a check (or the primary's position) may take before the server counts as down. */
  checkTimeoutMs: number;
  connectTimeoutMs: number;
}

/**
 * in: takes reads. lagging: further behind than DATABASE_REPLICA_MAX_LAG_MS at its last check.
 * down: unreachable, or a read on it failed. not-standby: it answers but is not in recovery (it
 * was promoted, or the URL names a primary): its data may differ from the primary's.
 * starting: not checked yet.
 */
export type ReplicaState = 'starting' | 'in' | 'lagging' | 'down' | 'not-standby';

export interface ReplicaStatus {
  name: string;
  state: ReplicaState;
  /** How long ago the primary first wrote past what the replica has replayed (null: unknown). */
  lagMs: number | null;
  /** The primary's position minus the replica's, in bytes of WAL. */
  lagBytes: number | null;
}

/** How often a replica is asked again while reads wait for it to replay a position. */
const WAIT_POLL_MS = 2;

/** One replica: its pool (a DataSource of its own), its monitoring connection and state. */
export class Replica {
  state: ReplicaState = 'starting';
  replayed: bigint | null = null;
  lagMs: number | null = null;
  lagBytes: number | null = null;
  source: DataSource | null = null;
  private monitor: pg.Client | null = null;
  private polling = false;
  private readonly waiters = new Set<{ lsn: bigint; done: (ok: boolean) => void }>();

  constructor(
    readonly name: string,
    readonly url: string,
    private readonly settings: ReplicaSettings,
  ) {}

  get inRotation(): boolean {
    return this.state === 'in' && this.source !== null;
  }

  /** Whether it is a standby, and the WAL position it has replayed. */
  async read(): Promise<{ standby: boolean; replayed: bigint | null }> {
    const client = await this.client();
    const { rows } = await client.query<{ standby: boolean; replayed: string | null }>(
      'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed',
    );
    const replayed = parseLsn(rows[0].replayed);
    if (replayed !== null) this.noteReplayed(replayed);
    return { standby: rows[0].standby, replayed };
  }

  private noteReplayed(lsn: bigint): void {
    if (this.replayed === null || lsn > this.replayed) this.replayed = lsn;
    for (const w of this.waiters) if (lsn >= w.lsn) w.done(true);
  }

  private async client(): Promise<pg.Client> {
    if (this.monitor) return this.monitor;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.settings.connectTimeoutMs,
      query_timeout: this.settings.checkTimeoutMs,
      application_name: 'keepsake-replica-monitor',
    });
    client.on('error', () => {
      if (this.monitor === client) this.monitor = null;
    });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.monitor = client;
    return client;
  }

  /** Out of rotation until a check finds it well again; waiting reads go to the primary. */
  down(): void {
    this.state = 'down';
    const monitor = this.monitor;
    this.monitor = null;
    void monitor?.end().catch(() => undefined);
    for (const w of this.waiters) w.done(false);
  }

  /** Resolves true once it has replayed `lsn`, false after `timeoutMs` or if it goes down. */
  waitFor(lsn: bigint, timeoutMs: number): Promise<boolean> {
    if (this.replayed !== null && this.replayed >= lsn) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        lsn,
        done: (ok: boolean) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      this.waiters.add(waiter);
      void this.poll();
    });
  }

  /** Asks for the replayed position again and again while reads wait for it. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.waiters.size > 0) {
        try {
          await this.read();
        } catch {
          this.down();
          return;
        }
        if (this.waiters.size > 0) await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
      }
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    this.down();
    if (this.source?.isInitialized) await this.source.destroy().catch(() => undefined);
    this.source = null;
  }

  status(): ReplicaStatus {
    return { name: this.name, state: this.state, lagMs: this.lagMs, lagBytes: this.lagBytes };
  }
}

/**
 * The replicas of DATABASE_REPLICA_URLS: each checked every DATABASE_REPLICA_CHECK_MS (is it a
 * standby, what has it replayed, how far behind is that), taken out of rotation when it lags
 * past DATABASE_REPLICA_MAX_LAG_MS, is down or is no longer a standby, and back in by itself.
 * A read asks for a fence first: the primary's WAL position read after the read was asked for,
 * which covers every write acknowledged before; it goes to a replica that has replayed that far.
 */
export class ReplicaSet {
  private readonly logger = new Logger('Database');
  readonly replicas: Replica[];
  private readonly history: PositionHistory;
  private sampler: pg.Client | null = null;
  private sampling: Promise<bigint> | null = null;
  private nextSample: Promise<bigint> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private turn = 0;
  private closed = false;

  constructor(
    urls: string[],
    private readonly makeSource: (url: string) => DataSource,
    private readonly primary: ServerLocator,
    private readonly settings: ReplicaSettings,
  ) {
    this.replicas = urls.map((url) => new Replica(describeServer(url), url, settings));
    this.history = new PositionHistory(2 * settings.maxLagMs + 4 * settings.checkMs);
  }

  /** Checks every replica now, then every checkMs. */
  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), this.settings.checkMs);
    this.timer.unref();
  }

  get anyInRotation(): boolean {
    return this.replicas.some((r) => r.inRotation);
  }

  /**
   * The primary's WAL insert position, read by a statement sent after this call: every write
   * acknowledged before the call is at or before it. Calls made while a reading is under way
   * share the next one.
   */
  fence(): Promise<bigint> {
    if (this.sampling) {
      return (this.nextSample ??= this.sampling
        .catch(() => undefined)
        .then(() => {
          this.nextSample = null;
          return this.fence();
        }));
    }
    const reading = this.samplePrimary();
    this.sampling = reading;
    void reading.catch(() => undefined).finally(() => (this.sampling = null));
    return reading;
  }

  private async samplePrimary(): Promise<bigint> {
    try {
      if (!this.sampler) {
        const { client } = await this.primary.connect({
          query_timeout: this.settings.checkTimeoutMs,
          application_name: 'keepsake-replica-monitor',
        });
        client.on('error', () => {
          if (this.sampler === client) this.sampler = null;
        });
        this.sampler = client;
      }
      const { rows } = await this.sampler.query<{ lsn: string }>(
        'SELECT pg_current_wal_insert_lsn()::text AS lsn',
      );
      const lsn = parseLsn(rows[0].lsn)!;
      this.history.add(lsn);
      return lsn;
    } catch (err) {
      const sampler = this.sampler;
      this.sampler = null;
      void sampler?.end().catch(() => undefined);
      throw err;
    }
  }

  /**
   * A replica in rotation that has replayed `lsn`, the next in turn among those that have; else
   * the one furthest on, waited for up to DATABASE_REPLICA_MAX_LAG_MS. Null: read from the primary.
   */
  async pick(lsn: bigint): Promise<Replica | null> {
    const candidates = this.replicas.filter((r) => r.inRotation);
    if (candidates.length === 0) return null;
    const ready = candidates.filter((r) => r.replayed !== null && r.replayed >= lsn);
    if (ready.length > 0) return ready[this.turn++ % ready.length];
    const furthest = candidates.reduce((a, b) => ((b.replayed ?? 0n) > (a.replayed ?? 0n) ? b : a));
    return (await furthest.waitFor(lsn, this.settings.maxLagMs)) && furthest.inRotation
      ? furthest
      : null;
  }

  /** A read on `replica` failed for want of it (connection lost, a recovery conflict). */
  failed(replica: Replica, err: unknown): void {
    if (replica.state === 'in') {
      this.logger.warn({
        msg: 'database replica out of rotation',
        replica: replica.name,
        reason: 'a read failed',
        error: (err as Error).message,
      });
    }
    replica.down();
  }

  statuses(): ReplicaStatus[] {
    return this.replicas.map((r) => r.status());
  }

  /** One round of checks (a round still under way is waited for, not doubled). */
  check(): Promise<void> {
    return (this.checking ??= this.checkAll().finally(() => (this.checking = null)));
  }

  private async checkAll(): Promise<void> {
    if (this.closed) return;
    // The primary's position first: a replica's lag is read against it.
    await this.fence().catch(() => undefined);
    await Promise.all(this.replicas.map((r) => this.checkOne(r)));
  }

  private async checkOne(replica: Replica): Promise<void> {
    const before = replica.state;
    let reason = '';
    try {
      const { standby, replayed } = await replica.read();
      if (!replica.source) {
        const source = this.makeSource(replica.url);
        await source.initialize();
        if (this.closed) {
          await source.destroy();
          return;
        }
        replica.source = source;
      }
      if (!standby) {
        replica.state = 'not-standby';
        reason = 'it is not a standby (promoted?)';
      } else {
        const latest = this.history.latest;
        replica.lagMs = replayed === null ? null : this.history.lagMs(replayed);
        replica.lagBytes =
          replayed === null || latest === null ? null : Math.max(0, Number(latest - replayed));
        if (replica.lagMs === null || replica.lagMs > this.settings.maxLagMs) {
          replica.state = 'lagging';
          reason = `${replica.lagMs ?? '?'} ms behind`;
        } else {
          replica.state = 'in';
        }
      }
    } catch (err) {
      replica.down();
      reason = (err as Error).message;
    }
    if (replica.state !== before) {
      const back = replica.state === 'in';
      this.logger[back ? 'log' : 'warn']({
        msg: back ? 'database replica in rotation' : 'database replica out of rotation',
        replica: replica.name,
        state: replica.state,
        ...(reason ? { reason } : {}),
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.checking?.catch(() => undefined);
    await Promise.all(this.replicas.map((r) => r.close()));
    await this.sampler?.end().catch(() => undefined);
    this.sampler = null;
  }
}
