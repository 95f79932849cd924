import { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { AppConfig } from '../config/app-config.js';
import { ENTITIES } from './entities.js';
import type { DatabaseQueue } from './database-queue.js';
import { queuedPg } from './queued-pool.js';
import { failoverPg, serverLocator } from './server-locator.js';

/** A pool on a server: the primary (found among DATABASE_URL's hosts) or one replica. */
export interface ServerPool {
  url: string;
  poolSize: number;
  /** The URL names the primary (several hosts, target_session_attrs): follow it across failovers. */
  primary: boolean;
  /** A pool for the read-only work (named so in pg_stat_activity; it creates no extension). */
  reads: boolean;
}

/**
 * One TypeORM `postgres` configuration for both stores. The embedded database is a single
 * PostgreSQL session, so it gets a pool of exactly one connection (two would interleave
 * statements); code must never query outside an open transaction's own manager. `queue`, when
 * given, hands out the turns on the pool's connections (database-queue.ts): the embedded one,
 * or a server's DATABASE_POOL_SIZE.
 */
export function dataSourceOptions(
  config: AppConfig,
  /** How `pg` reaches the embedded database (its thread, or PGlite in this thread). */
  embedded?: object,
  queue?: DatabaseQueue,
): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false as const,
  };
  if (embedded) {
    return {
      ...common,
      ...(queue ? { driver: queuedPg(queue) } : {}),
      poolSize: 1,
      extra: {
        ...embedded,
        max: 1,
        connectionTimeoutMillis: config.env.DB_CONNECT_TIMEOUT_MS,
      },
    };
  }
  return serverDataSourceOptions(
    config,
    {
      url: config.env.DATABASE_URL!,
      poolSize: config.env.DATABASE_POOL_SIZE,
      primary: true,
      reads: false,
    },
    queue,
  );
}

/**
 * A pool on a server. The URL goes to `pg` as it is (TypeORM's own URL parsing drops socket
 * hosts and parameters), one server at a time: the primary's pools connect where the server
 * locator finds the primary among the URL's hosts (server-locator.ts). The read pools create no
 * extension (a replica could not).
 */
export function serverDataSourceOptions(
  config: AppConfig,
  pool: ServerPool,
  /** Whose turn it is on the pool's connections (as many slots as the pool has). */
  queue?: DatabaseQueue,
): DataSourceOptions {
  const failover = pool.primary
    ? failoverPg(serverLocator(pool.url, config.env.DB_CONNECT_TIMEOUT_MS))
    : undefined;
  return {
    type: 'postgres' as const,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false as const,
    ...(pool.reads ? { installExtensions: false } : {}),
    ...(queue ? { driver: queuedPg(queue, failover) } : failover ? { driver: failover } : {}),
    poolSize: pool.poolSize,
    extra: {
      connectionString: pool.url,
      connectionTimeoutMillis: config.env.DB_CONNECT_TIMEOUT_MS,
      application_name: pool.reads ? 'keepsake-reads' : 'keepsake',
      ...(config.env.DATABASE_STATEMENT_TIMEOUT_MS > 0
        ? { statement_timeout: config.env.DATABASE_STATEMENT_TIMEOUT_MS }
        : {}),
    },
  };
}
