/**
 * The TypeORM data source for the migration commands (`npm run migration:run|revert|generate`).
 * It reads the same environment as the service: DATABASE_URL, or the embedded database in
 * DATA_DIR (locked, so stop the service first).
 */
import 'reflect-metadata';
import { join, resolve } from 'node:path';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { vector } from '@electric-sql/pglite-pgvector';
import { DataSource } from 'typeorm';
import { loadAppConfig } from './src/app.config.js';
import { dataSourceOptions } from './src/database/data-source-options.js';
import { lockDataDir } from './src/database/embedded-postgres.js';

const config = loadAppConfig();

function embeddedConfig() {
  const release = lockDataDir(config.env.DATA_DIR);
  process.once('exit', release);
  return createPgConfig(join(resolve(config.env.DATA_DIR), 'pg'), {
    extensions: { vector, pg_trgm },
  });
}

export default new DataSource(
  dataSourceOptions(config, config.embedded ? embeddedConfig() : undefined),
);
