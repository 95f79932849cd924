import { Global, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { DatabaseMaintenanceService } from './database-maintenance.service.js';
import { DatabaseReads } from './database-reads.js';
import { describeDatabase } from './database.config.js';
import { dataSourceOptions, serverDataSourceOptions } from './data-source-options.js';
import { ReplicaSet } from './replica-set.js';
import { SCHEMA_XACT_LOCK_SQL } from './schema-lock.js';
import { NoWritableServerError, serverLocator } from './server-locator.js';
import { EmbeddedPostgres, openEmbeddedPostgres } from './embedded-postgres.js';
import { pgvectorProblem } from './pgvector-version.js';
import { DatabaseQueue } from './database-queue.js';
import { StorageGuard, storageRoom } from './storage-guard.service.js';
import { DATABASE_FAILURES } from '../common/errors/domain-http.filter.js';

export const EMBEDDED_POSTGRES = Symbol('EMBEDDED_POSTGRES');

export class DatabaseUnavailableError extends Error {}

/**
 * At boot on a real server: the extensions must be creatable and pgvector new enough, or we stop
 * with one clear line.
 */
async function ensureExtensions(ds: DataSource, url: string): Promise<void> {
  const where = describeDatabase(url);
  for (const ext of ['vector', 'pg_trgm']) {
    try {
      await ds.query(`CREATE EXTENSION IF NOT EXISTS ${ext}`);
    } catch (err) {
      throw new DatabaseUnavailableError(
        `PostgreSQL at ${where} cannot create the "${ext}" extension (${(err as Error).message}); ` +
          (ext === 'vector'
            ? 'install pgvector on that server or unset DATABASE_URL to use the embedded database.'
            : 'install postgresql-contrib on that server or unset DATABASE_URL.'),
      );
    }
  }
  const [vector] = (await ds.query(
    `SELECT e.extversion AS installed, a.default_version AS available
       FROM pg_extension e LEFT JOIN pg_available_extensions a ON a.name = e.extname
      WHERE e.extname = 'vector'`,
  )) as { installed: string; available: string | null }[];
  const problem = pgvectorProblem(where, vector.installed, vector.available);
  if (problem) throw new DatabaseUnavailableError(problem);
}

/** Node's codes for a server not there yet, and PostgreSQL's for one starting or full. */
const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOENT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '57P03',
  '53300',
]);

export function isTransientConnectError(err: unknown): boolean {
  const e = err as { code?: string; message?: string; errors?: unknown[] };
  // Several hosts, none the primary yet: down or standbys, as while a failover is under way.
  if (err instanceof NoWritableServerError) return err.transient;
  if (e?.code && TRANSIENT.has(e.code)) return true;
  // Several addresses for one host name: Node reports an AggregateError of each attempt.
  if (Array.isArray(e?.errors) && e.errors.length > 0)
    return e.errors.every(isTransientConnectError);
  return /timeout (expired|exceeded)|connection timeout|terminated unexpectedly/i.test(
    e?.message ?? '',
  );
}

/**
 * Connects, retrying a server that is not reachable yet with backoff (a database that starts
 * after the service, as in a compose file) for DATABASE_BOOT_TIMEOUT_MS. Wrong credentials, a
 * missing database or extension fail at once: waiting would not fix them.
 */
async function connect(
  config: AppConfig,
  embedded: EmbeddedPostgres | null,
  queue: DatabaseQueue,
): Promise<DataSource> {
  const logger = new Logger('Database');
  const deadline = Date.now() + (embedded ? 0 : config.env.DATABASE_BOOT_TIMEOUT_MS);
  for (let attempt = 1, delay = 250; ; attempt++, delay = Math.min(delay * 2, 5000)) {
    const ds = new DataSource(
      embedded
        ? dataSourceOptions(config, embedded.pgConfig, queue)
        : dataSourceOptions(config, undefined, queue),
    );
    try {
      return await ds.initialize();
    } catch (err) {
      const wait = Math.min(delay, deadline - Date.now());
      if (!isTransientConnectError(err) || wait <= 0) {
        throw new DatabaseUnavailableError(
          `Cannot connect to PostgreSQL${config.env.DATABASE_URL ? ` at ${describeDatabase(config.env.DATABASE_URL)}` : ''}: ${(err as Error).message}${poolerHint(err)}`,
        );
      }
      logger.warn({
        msg: 'database not reachable yet, retrying',
        attempt,
        retryInMs: wait,
        error: (err as Error).message,
      });
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** PgBouncer refuses startup parameters it does not know, statement_timeout among them. */
function poolerHint(err: unknown): string {
  return /unsupported startup parameter: statement_timeout/.test((err as Error).message)
    ? ' (behind PgBouncer, leave DATABASE_STATEMENT_TIMEOUT_MS at 0 and set statement_timeout on the role: ALTER ROLE ... SET statement_timeout = ...)'
    : '';
}

/** The turns of the embedded database's one connection, or of the server's write pool. */
export function databaseQueue(config: AppConfig): DatabaseQueue {
  return new DatabaseQueue({
    requestTimeoutMs: config.env.DATABASE_QUEUE_TIMEOUT_MS,
    connectTimeoutMs: config.env.DB_CONNECT_TIMEOUT_MS,
    slots: config.embedded ? 1 : config.env.DATABASE_POOL_SIZE,
  });
}

export async function openDataSource(
  config: AppConfig,
  embedded: EmbeddedPostgres | null,
  queue: DatabaseQueue = databaseQueue(config),
): Promise<DataSource> {
  const ds = await connect(config, embedded, queue);
  // The lock is held by a transaction on a connection of its own while migrations run on others
  // from the pool: a transaction's lock, not a session's, so that it holds (and is let go)
  // behind a pooler in transaction mode too, which keeps a transaction on one server connection
  // but may run a session's next statement on another.
  const lock = embedded ? null : ds.createQueryRunner();
  try {
    if (lock) {
      await lock.startTransaction();
      await lock.query(SCHEMA_XACT_LOCK_SQL);
    }
    if (config.env.DATABASE_URL) await ensureExtensions(ds, config.env.DATABASE_URL);
    if (!(embedded && (await startsOnFullDisk(config, ds)))) {
      await ds.runMigrations({ transaction: 'each' });
    }
  } catch (err) {
    if (lock?.isTransactionActive) await lock.rollbackTransaction().catch(() => undefined);
    await lock?.release();
    await ds.destroy();
    throw err;
  }
  if (lock) {
    await lock.commitTransaction();
    await lock.release();
  }
  return ds;
}

/**
 * The embedded database on a disk below STORAGE_RESERVE_MB: with nothing to migrate it starts
 * without writing (read-only, storage-guard.service.ts); with a migration pending it does not
 * start, since a migration that runs out of room mid-write could leave PostgreSQL unable to.
 */
async function startsOnFullDisk(config: AppConfig, ds: DataSource): Promise<boolean> {
  let room;
  try {
    room = await storageRoom(config);
  } catch {
    return false; // not readable: the guard says so; migrations run as they always did
  }
  if (room.freeBytes >= room.reserveBytes) return false;
  const mb = (bytes: number) => Math.floor(bytes / (1024 * 1024));
  if (await ds.showMigrations()) {
    throw new DatabaseUnavailableError(
      `The disk of DATA_DIR (${config.env.DATA_DIR}) has ${mb(room.freeBytes)} MB free, less than ` +
        `STORAGE_RESERVE_MB (${mb(room.reserveBytes)} MB), and this version of Keepsake has ` +
        'database migrations to apply, which need room to be written safely. Free some space on ' +
        'that disk and start again; nothing was changed.',
    );
  }
  new Logger('Storage').error({
    msg: 'storage full at boot: starting read-only (reads served, writes refused with DISK_FULL)',
    freeBytes: room.freeBytes,
    reserveBytes: room.reserveBytes,
  });
  return true;
}

/**
 * The read side (database-reads.ts): on a server, the primary's read pool and the replicas of
 * DATABASE_REPLICA_URLS, checked from the start (one that is down at boot joins once it is up).
 */
export async function openReads(
  config: AppConfig,
  dataSource: DataSource,
  metrics: ServiceMetrics | null,
): Promise<DatabaseReads> {
  const url = config.env.DATABASE_URL;
  if (!url) return new DatabaseReads(dataSource);
  const readPool = new DataSource(
    serverDataSourceOptions(config, {
      url,
      poolSize: config.env.DATABASE_READ_POOL_SIZE,
      primary: true,
      reads: true,
    }),
  );
  await readPool.initialize();
  const urls = config.env.DATABASE_REPLICA_URLS ?? [];
  const replicas = urls.length
    ? new ReplicaSet(
        urls,
        (replicaUrl) =>
          new DataSource(
            serverDataSourceOptions(config, {
              url: replicaUrl,
              poolSize: config.env.DATABASE_READ_POOL_SIZE,
              primary: false,
              reads: true,
            }),
          ),
        serverLocator(url, config.env.DB_CONNECT_TIMEOUT_MS),
        {
          maxLagMs: config.env.DATABASE_REPLICA_MAX_LAG_MS,
          checkMs: config.env.DATABASE_REPLICA_CHECK_MS,
          checkTimeoutMs: config.env.HEALTH_DB_TIMEOUT_MS,
          connectTimeoutMs: config.env.DB_CONNECT_TIMEOUT_MS,
        },
      )
    : null;
  if (replicas) {
    await replicas.start();
    metrics?.readReplicasWith(() => replicas.statuses());
  }
  return new DatabaseReads(readPool, replicas, metrics, true);
}

@Injectable()
class DatabaseLifecycle implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly dataSource: DataSource,
    private readonly reads: DatabaseReads,
    @Inject(EMBEDDED_POSTGRES) private readonly embedded: EmbeddedPostgres | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.reads.close();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.embedded?.close();
    this.logger.log('database closed');
  }
}

@Global()
@Module({
  providers: [
    {
      provide: EMBEDDED_POSTGRES,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        config.embedded
          ? openEmbeddedPostgres(config.env.DATA_DIR, config.env.EMBEDDED_DATABASE_THREAD)
          : null,
    },
    { provide: DatabaseQueue, inject: [AppConfig], useFactory: databaseQueue },
    {
      provide: DataSource,
      inject: [AppConfig, EMBEDDED_POSTGRES, DatabaseQueue],
      useFactory: async (
        config: AppConfig,
        embedded: EmbeddedPostgres | null,
        queue: DatabaseQueue,
      ) => {
        try {
          return await openDataSource(config, embedded, queue);
        } catch (err) {
          await embedded?.close();
          throw err;
        }
      },
    },
    {
      provide: DatabaseReads,
      inject: [AppConfig, DataSource, { token: ServiceMetrics, optional: true }],
      useFactory: (config: AppConfig, dataSource: DataSource, metrics?: ServiceMetrics) =>
        openReads(config, dataSource, metrics ?? null),
    },
    DatabaseLifecycle,
    DatabaseMaintenanceService,
    StorageGuard,
    { provide: DATABASE_FAILURES, useExisting: StorageGuard },
  ],
  exports: [
    DataSource,
    DatabaseReads,
    EMBEDDED_POSTGRES,
    DatabaseQueue,
    DatabaseMaintenanceService,
    StorageGuard,
    DATABASE_FAILURES,
  ],
})
export class DatabaseModule {}
