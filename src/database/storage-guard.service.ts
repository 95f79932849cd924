import { statfs } from 'node:fs/promises';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { asBackground } from './database-queue.js';
import { databaseFailure } from './database-failure.js';
import { DatabaseException } from './database.exception.js';

export interface StorageState {
  /** Writes are refused until space is freed. */
  full: boolean;
  /** Free bytes on DATA_DIR's filesystem when last read (null on a server, whose disk is its own). */
  freeBytes: number | null;
}

/**
 * Keeps the embedded database from running out of disk mid-write. PostgreSQL handles a full
 * disk while extending a table (the statement fails, nothing is lost), but not while it writes
 * its WAL: that is a PANIC, which inside PGlite ends the database. So before the disk fills,
 * below STORAGE_RESERVE_MB free, the session is made read-only (`default_transaction_read_only`):
 * every write is refused whole (DISK_FULL), reads go on, and once there is room again
 * (the reserve and a quarter more) writes resume by themselves, with no restart.
 * On a server the disk is the server's: its own errors (disk_full) say so instead.
 */
@Injectable()
export class StorageGuard implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Storage');
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private state: StorageState = { full: false, freeBytes: null };

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  get current(): StorageState {
    return this.state;
  }

  /** The domain exception a database error stands for (a full disk, a database away), if any. */
  failure(err: unknown): DatabaseException | null {
    return databaseFailure(err, this.state.full);
  }

  /** Why a write would be refused now: storage full; null while writes are taken. */
  writesRefused(): DatabaseException | null {
    return this.state.full ? DatabaseException.storageFull() : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.embedded) return;
    await this.check();
    this.timer = setInterval(() => void this.check(), this.config.env.STORAGE_CHECK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Reads the free space and refuses or allows writes accordingly; one check at a time. */
  check(): Promise<void> {
    this.checking ??= this.readAndApply().finally(() => (this.checking = null));
    return this.checking;
  }

  private async readAndApply(): Promise<void> {
    let freeBytes: number;
    try {
      const fs = await statfs(this.config.env.DATA_DIR);
      freeBytes = fs.bavail * fs.bsize;
    } catch (err) {
      this.logger.warn({ msg: 'free space not readable', error: (err as Error).message });
      return;
    }
    const reserve = this.config.env.STORAGE_RESERVE_MB * 1024 * 1024;
    const full = this.state.full ? freeBytes < reserve * 1.25 : freeBytes < reserve;
    try {
      // Applied again at every check while full: a database opened again starts read-write.
      if (full || this.state.full) await this.refuseWrites(full);
    } catch (err) {
      this.logger.warn({ msg: 'could not switch writes', full, error: (err as Error).message });
      return;
    }
    if (full !== this.state.full) {
      const log = {
        msg: full ? 'storage full: writes refused' : 'storage freed: writes resume',
        freeBytes,
        reserveBytes: reserve,
      };
      if (full) this.logger.error(log);
      else this.logger.warn(log);
    }
    this.state = { full, freeBytes };
  }

  private refuseWrites(refuse: boolean): Promise<unknown> {
    return asBackground(() =>
      this.dataSource.query(`SET default_transaction_read_only = ${refuse ? 'on' : 'off'}`),
    );
  }
}
