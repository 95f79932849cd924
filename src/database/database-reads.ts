import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { databaseFailure } from './database-failure.js';
import type { Replica, ReplicaSet } from './replica-set.js';
import type { Queryable } from './sql.js';

/** Where a read went, and why there: the labels of keepsake_database_reads_total. */
export type ReadRoute =
  | 'replica'
  /** No replica configured: the primary's read pool. */
  | 'primary'
  /** Replicas configured, none in rotation. */
  | 'primary_no_replica'
  /** No replica had replayed the fence within DATABASE_REPLICA_MAX_LAG_MS. */
  | 'primary_replica_behind'
  /** The fence could not be read from the primary. */
  | 'primary_no_fence'
  /** The replica failed under the read (gone, or a recovery conflict): read again there. */
  | 'primary_replica_failed';

export interface ReadObserver {
  databaseRead(route: ReadRoute, waitSeconds: number | null): void;
}

/**
 * What the read-only paths run on: statements, and read-only transactions (a search's HNSW
 * settings are `SET LOCAL`), on a replica or on the primary's read pool.
 */
export interface ReadSource extends Queryable {
  transaction<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T>;
}

/** A recovery conflict cancels a standby's statement (or its session) when replay needs to go on. */
function replicaTrouble(err: unknown): boolean {
  if (databaseFailure(err)) return true;
  for (let e = err as { code?: string; message?: string; driverError?: unknown } | undefined; e;) {
    if (e.code === '57P04' || e.code === '40P01') return true;
    if (e.code === '40001' && /conflict with recovery/i.test(e.message ?? '')) return true;
    e = e.driverError as typeof e;
  }
  return false;
}

/** A read on a replica that, when the replica fails under it, is read again on the primary. */
class ReplicaRead implements ReadSource {
  constructor(
    private readonly replica: Replica,
    private readonly source: DataSource,
    private readonly fallback: DataSource,
    private readonly onFailure: (replica: Replica, err: unknown) => void,
  ) {}

  async query(text: string, parameters?: unknown[]): Promise<unknown> {
    try {
      return await this.source.query(text, parameters);
    } catch (err) {
      if (!replicaTrouble(err)) throw err;
      this.onFailure(this.replica, err);
      return this.fallback.query(text, parameters);
    }
  }

  async transaction<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.source.transaction(fn);
    } catch (err) {
      if (!replicaTrouble(err)) throw err;
      this.onFailure(this.replica, err);
      // Read-only work: running it again from the start is safe.
      return this.fallback.transaction(fn);
    }
  }
}

/**
 * The one place reads are routed. The read-only paths (recall and search, the retrieval of
 * `context` and of sendMessage's reply, the lists of facts, memories, stories, summaries and
 * period summaries) take `source()`; writes and anything inside a transaction stay on the
 * primary's DataSource. With replicas, a read first takes a fence (the primary's WAL position
 * read after it was asked for) and goes to a replica that has replayed that far, waiting up to
 * DATABASE_REPLICA_MAX_LAG_MS, else to the primary: a read sees every write acknowledged before
 * it began, so a member always reads their own writes, on any instance. Without replicas reads
 * go to the primary through a pool of their own (DATABASE_READ_POOL_SIZE), so that they never
 * queue behind the writes' statements. On the embedded database all of it is its one connection.
 */
export class DatabaseReads {
  private readonly scopes = new AsyncLocalStorage<{ source?: Promise<ReadSource> }>();

  constructor(
    /** The primary's read pool (the application's DataSource on the embedded database). */
    private readonly primary: DataSource,
    readonly replicas: ReplicaSet | null = null,
    private readonly observer: ReadObserver | null = null,
    /** Whether `primary` is a pool of the reads' own, closed with them. */
    private readonly ownsPool = false,
  ) {}

  /** Where a read-only statement or transaction goes now (within a scope, where its first went). */
  source(): Promise<ReadSource> {
    const scope = this.scopes.getStore();
    if (!scope) return this.route();
    return (scope.source ??= this.route());
  }

  /**
   * Runs `fn` with every read in it on one choice of server (one fence, one wait): a search's or
   * a context's statements. Nested scopes share the outer one.
   */
  scope<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scopes.getStore()) return fn();
    return this.scopes.run({}, fn);
  }

  private async route(): Promise<ReadSource> {
    const replicas = this.replicas;
    if (!replicas) return this.onPrimary('primary', null);
    if (!replicas.anyInRotation) return this.onPrimary('primary_no_replica', null);
    const started = performance.now();
    let fence: bigint;
    try {
      fence = await replicas.fence();
    } catch {
      return this.onPrimary('primary_no_fence', null);
    }
    const replica = await replicas.pick(fence);
    const waited = (performance.now() - started) / 1000;
    if (!replica?.source) return this.onPrimary('primary_replica_behind', waited);
    this.observer?.databaseRead('replica', waited);
    return new ReplicaRead(replica, replica.source, this.primary, (r, err) => {
      replicas.failed(r, err);
      this.observer?.databaseRead('primary_replica_failed', null);
    });
  }

  private onPrimary(route: ReadRoute, waited: number | null): ReadSource {
    this.observer?.databaseRead(route, waited);
    return this.primary;
  }

  /** Closes the read pool and the replicas' (not the application's DataSource, its own). */
  async close(): Promise<void> {
    await this.replicas?.close();
    if (this.ownsPool && this.primary.isInitialized) await this.primary.destroy();
  }
}
