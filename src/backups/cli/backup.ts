/**
 * npm run backup -- --out FILE
 *
 * Writes a consistent backup of everything Keepsake keeps into FILE (a .tar.gz any tar opens):
 * on the embedded database, its data directory (the database, which holds the stories' original
 * files, and the token secret), asked of the running service through its control socket, or
 * read directly while it is stopped; on a server (DATABASE_URL), a pg_dump archive taken in one
 * snapshot while clients go on writing (pg_dump from PG_BIN or the PATH, as new as the server).
 * The file is checked once written; `npm run restore` brings it back.
 */
import 'reflect-metadata';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { AppConfig, ConfigValidationError } from '../../config/app-config.js';
import { loadAppConfig } from '../../app.config.js';
import { dataSourceOptions } from '../../database/data-source-options.js';
import { lockHolder, openEmbeddedPostgres } from '../../database/embedded-postgres.js';
import { verifyBundle } from '../backup-bundle.js';
import { BackupsService } from '../backups.service.js';
import { controlSocketPath } from '../control-socket.service.js';
import { keepNewFilesPrivate } from '../../common/files/private-files.js';

/** Asks the running service for the backup and writes what it answers to `partial`. */
async function fromRunningService(dataDir: string, partial: string): Promise<void> {
  const res = await new Promise<import('node:http').IncomingMessage>((done, fail) => {
    const req = request(
      { socketPath: controlSocketPath(dataDir), path: '/backup', method: 'POST' },
      done,
    );
    req.on('error', (err) =>
      fail(
        new Error(
          `The service running on ${dataDir} did not answer on its control socket (${err.message}). ` +
            'Stop it and run this again, or restart it with this version of Keepsake.',
        ),
      ),
    );
    req.end();
  });
  if (res.statusCode !== 200)
    throw new Error(`The service refused the backup (${res.statusCode}).`);
  await pipeline(res, createWriteStream(partial, { mode: 0o600 }));
}

/** Reads the stopped embedded database (or a server) itself. */
async function directly(config: AppConfig, partial: string): Promise<void> {
  const embedded = config.embedded ? await openEmbeddedPostgres(config.env.DATA_DIR, 'main') : null;
  // No migrations: a backup takes the database as it is.
  const ds = new DataSource(
    embedded ? dataSourceOptions(config, embedded.pgConfig) : dataSourceOptions(config),
  );
  try {
    await ds.initialize();
    await new BackupsService(ds, config).writeFile(partial);
  } finally {
    if (ds.isInitialized) await ds.destroy();
    await embedded?.close();
  }
}

async function main(): Promise<number> {
  keepNewFilesPrivate();
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  if (!values.out) {
    console.error('Usage: npm run backup -- --out FILE');
    return 2;
  }
  let config: AppConfig;
  try {
    config = loadAppConfig();
  } catch (err) {
    if (err instanceof ConfigValidationError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }
  const out = resolve(values.out);
  const partial = `${out}.partial`;
  const started = performance.now();
  try {
    const running = config.embedded ? lockHolder(config.env.DATA_DIR) : null;
    if (running) await fromRunningService(config.env.DATA_DIR, partial);
    else await directly(config, partial);
    const manifest = await verifyBundle(partial);
    await rename(partial, out);
    const { size } = await stat(out);
    const c = manifest.counts;
    console.log(
      `Backup written to ${out} (${(size / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s` +
        `${running ? `, from the running service, pid ${running}` : ''}): ${c.legacies} legacies, ` +
        `${c.conversations} conversations, ${c.messages} turns, ${c.facts} facts, ${c.memories} memories, ` +
        `${c.stories} stories (${c.story_files} original files).`,
    );
    return 0;
  } catch (err) {
    await rm(partial, { force: true });
    console.error(`No backup was written: ${(err as Error).message}`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
