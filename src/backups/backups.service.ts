import { existsSync, readFileSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Injectable, Logger } from '@nestjs/common';
import { CronTime } from 'cron';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { asBackground } from '../database/database-queue.js';
import { BackupManifest, writeBundle } from './backup-bundle.js';
import { dumpServer, snapshotEmbedded } from './backup-sources.js';

/** Scheduled backups are named by when they were taken, so that the newest sorts last. */
const SCHEDULED = /^keepsake-backup-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z)\.tar\.gz$/;

export function scheduledName(at: Date): string {
  return `keepsake-backup-${at.toISOString().slice(0, 19).replace(/:/g, '-')}Z.tar.gz`;
}

/** Keepsake's own version (package.json), written into each manifest. */
export function keepsakeVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'keepsake') return pkg.version ?? 'unknown';
    }
    if (dirname(dir) === dir) return 'unknown';
    dir = dirname(dir);
  }
}

export interface LastBackup {
  file: string;
  at: Date;
}

/**
 * Backups of everything Keepsake keeps: on the embedded database its data directory (the
 * database, which holds stories' original files, and the token secret), on a server a pg_dump
 * archive. Made on demand (`npm run backup`, through the running service's control socket when
 * it runs) and, on the embedded database, on BACKUP_SCHEDULE into BACKUP_DIR, keeping
 * BACKUP_KEEP of them.
 */
@Injectable()
export class BackupsService {
  private readonly logger = new Logger('Backups');
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  get directory(): string {
    return resolve(this.config.env.BACKUP_DIR ?? join(this.config.env.DATA_DIR, 'backups'));
  }

  /** Writes a whole backup to `out`. One at a time: a second waits for the first. */
  write(out: Writable): Promise<BackupManifest> {
    const next = (this.running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.writeNow(out));
    this.running = next;
    return next;
  }

  private async writeNow(out: Writable): Promise<BackupManifest> {
    const env = this.config.env;
    // Staged beside the data (a fast copy on the same disk) or, for a dump, in the temp folder.
    const root = this.config.embedded ? resolve(env.DATA_DIR) : tmpdir();
    const staging = await mkdtemp(join(root, '.backup-'));
    try {
      const manifest = this.config.embedded
        ? await snapshotEmbedded(this.dataSource, env.DATA_DIR, staging, keepsakeVersion())
        : await dumpServer(env.DATABASE_URL!, staging, keepsakeVersion());
      await writeBundle(staging, manifest, out);
      return manifest;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Writes a backup to `path`: under another name until it is whole, so a file there is one. */
  async writeFile(path: string): Promise<BackupManifest> {
    await mkdir(dirname(resolve(path)), { recursive: true });
    const partial = `${path}.partial`;
    try {
      const manifest = await this.write(createWriteStream(partial, { mode: 0o600 }));
      await rename(partial, path);
      return manifest;
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  /** The newest whole scheduled backup in BACKUP_DIR, if any. */
  async lastGood(): Promise<LastBackup | null> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch {
      return null;
    }
    const newest = names
      .filter((n) => SCHEDULED.test(n))
      .sort()
      .pop();
    if (!newest) return null;
    const stamp = SCHEDULED.exec(newest)![1];
    const [day, time] = stamp.split('T');
    return {
      file: join(this.directory, newest),
      at: new Date(`${day}T${time.replace(/-/g, ':')}`),
    };
  }

  /**
   * The scheduled backup, when one is due: none yet, or BACKUP_SCHEDULE has come round since
   * the last (a computer that was off then makes it within the hour it is on again). Running it
   * twice makes one backup. Answers the file written, or null.
   */
  async backupIfDue(now = new Date()): Promise<string | null> {
    const schedule = this.config.env.BACKUP_SCHEDULE;
    if (!schedule || !this.config.embedded) return null;
    const last = await this.lastGood();
    if (last) {
      const due = new CronTime(schedule, 'UTC').getNextDateFrom(last.at).toJSDate();
      if (due > now) return null;
    }
    const file = join(this.directory, scheduledName(now));
    const started = performance.now();
    const manifest = await asBackground(() => this.writeFile(file));
    const { size } = await stat(file);
    this.logger.log({
      msg: 'backup made',
      file,
      bytes: size,
      ms: Math.round(performance.now() - started),
      messages: manifest.counts.messages,
    });
    await this.prune();
    return file;
  }

  /** Keeps the newest BACKUP_KEEP scheduled backups; whatever else is in the folder stays. */
  private async prune(): Promise<void> {
    const names = (await readdir(this.directory)).filter((n) => SCHEDULED.test(n)).sort();
    for (const old of names.slice(0, Math.max(0, names.length - this.config.env.BACKUP_KEEP))) {
      await rm(join(this.directory, old), { force: true });
    }
  }
}
