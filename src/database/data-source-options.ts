import { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { AppConfig } from '../config/app-config.js';
import { ENTITIES } from './entities.js';
import type { DatabaseQueue } from './database-queue.js';
import { queuedPg } from './queued-pool.js';

/**
 * One TypeORM `postgres` configuration for both stores. The embedded database is a single
 * PostgreSQL session, so it gets a pool of exactly one connection (two would interleave
 * statements), whose turns `queue` hands out when given; code must never query outside an open
 * transaction's own manager.
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
  // The URL goes to `pg` as it is: TypeORM's own URL parsing drops socket hosts and parameters.
  return {
    ...common,
    poolSize: config.env.DATABASE_POOL_SIZE,
    extra: {
      connectionString: config.env.DATABASE_URL,
      connectionTimeoutMillis: config.env.DB_CONNECT_TIMEOUT_MS,
      ...(config.env.DATABASE_STATEMENT_TIMEOUT_MS > 0
        ? { statement_timeout: config.env.DATABASE_STATEMENT_TIMEOUT_MS }
        : {}),
    },
  };
}
