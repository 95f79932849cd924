/**
 * npm run schema:print   writes schema.gql from the code-first schema
 * npm run schema:check   fails when the committed schema.gql differs from the code
 */
import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadAppConfig } from '../app.config.js';
import { createApp } from '../bootstrap.js';
import { renderSchema } from '../graphql/schema-file.js';

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  // A throwaway embedded database: printing the schema must not touch real data.
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-schema-'));
  const app = await createApp(
    loadAppConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'error', JWT_SECRET: 'x'.repeat(32) }),
  );
  await app.init();
  const schema = renderSchema(app);
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
  const file = resolve('schema.gql');
  if (check) {
    const committed = (() => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    })();
    if (committed !== schema) {
      console.error('schema.gql is out of date: run `npm run schema:print` and commit it.');
      process.exit(1);
    }
    console.log('schema.gql matches the code.');
    return;
  }
  writeFileSync(file, schema);
  console.log(`wrote ${file}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
