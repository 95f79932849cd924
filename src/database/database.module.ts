import { Global, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { DatabaseMaintenance } from './database-maintenance.service.js';
import { dataSourceOptions } from './data-source-options.js';
import { EmbeddedPostgres, openEmbeddedPostgres } from './embedded-postgres.js';

export const EMBEDDED_POSTGRES = Symbol('EMBEDDED_POSTGRES');

export class DatabaseUnavailableError extends Error {}

/** At boot on a real server: the extensions must be creatable, or we stop with one clear line. */
async function ensureExtensions(ds: DataSource, url: string): Promise<void> {
  const where = (() => {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  })();
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
}

export async function openDataSource(
  config: AppConfig,
  embedded: EmbeddedPostgres | null,
): Promise<DataSource> {
  const ds = new DataSource(
    dataSourceOptions(config, embedded ? createPgConfig(embedded.db) : undefined),
  );
  try {
    await ds.initialize();
  } catch (err) {
    throw new DatabaseUnavailableError(`Cannot connect to PostgreSQL: ${(err as Error).message}`);
  }
  try {
    if (config.env.DATABASE_URL) await ensureExtensions(ds, config.env.DATABASE_URL);
    await ds.runMigrations({ transaction: 'each' });
  } catch (err) {
    await ds.destroy();
    throw err;
  }
  return ds;
}

@Injectable()
class DatabaseLifecycle implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(EMBEDDED_POSTGRES) private readonly embedded: EmbeddedPostgres | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
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
        config.embedded ? openEmbeddedPostgres(config.env.DATA_DIR) : null,
    },
    {
      provide: DataSource,
      inject: [AppConfig, EMBEDDED_POSTGRES],
      useFactory: async (config: AppConfig, embedded: EmbeddedPostgres | null) => {
        try {
          return await openDataSource(config, embedded);
        } catch (err) {
          await embedded?.close();
          throw err;
        }
      },
    },
    DatabaseLifecycle,
    DatabaseMaintenance,
  ],
  exports: [DataSource, EMBEDDED_POSTGRES, DatabaseMaintenance],
})
export class DatabaseModule {}
