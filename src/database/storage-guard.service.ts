import { statfs } from 'node:fs/promises';
import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
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

export interface StorageRoom {
  freeBytes: number;
  /** STORAGE_RESERVE_MB in bytes: below it, writes are refused. */
  reserveBytes: number;
}

/** The free space of DATA_DIR's disk, and the reserve kept on it (the embedded database's). */
export async function storageRoom(config: AppConfig): Promise<StorageRoom> {
  const fs = await statfs(config.env.DATA_DIR);
  return {
    freeBytes: fs.bavail * fs.bsize,
    reserveBytes: config.env.STORAGE_RESERVE_MB * 1024 * 1024,
  };
}

/** Work that writes, put off while the disk is full (what boot itself would write). */
interface Deferred {
  what: string;
  task: () => Promise<void>;
}

/**
 * Keeps the embedded database from running out of disk mid-write. PostgreSQL handles a full
 * disk while extending a table (the statement fails, nothing is lost), but not while it writes
 * its WAL: that is a PANIC, which inside PGlite ends the database. So before the disk fills,
 * below STORAGE_RESERVE_MB free, the session is made read-only (`default_transaction_read_only`):
 * every write is refused whole (DISK_FULL), reads go on, and once there is room again
 * (the reserve and a quarter more) writes resume by themselves, with no restart.
 * On a server the disk is the server's: its own errors (disk_full) say so instead.
 *
 * Started on a full disk, the service is read-only from the first request: the state is read
 * before any module starts (onModuleInit), boot skips migrations when none is pending (and
 * refuses to start when one is: openDataSource), and what boot itself writes waits for room
 * (`whenWritable`).
 */
@Injectable()
export class StorageGuard implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Storage');
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private state: StorageState = { full: false, freeBytes: null };
  private deferred: Deferred[] = [];

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

  // Before any module's onApplicationBootstrap, where boot's own writes are.
  async onModuleInit(): Promise<void> {
    if (!this.config.embedded) return;
    await this.check();
    this.timer = setInterval(() => void this.check(), this.config.env.STORAGE_CHECK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Runs work that writes now while writes are taken; on a full disk, once they are again (in
   * the background), so that a service started on a full disk serves reads meanwhile.
   */
  async whenWritable(what: string, task: () => Promise<void>): Promise<void> {
    if (!this.state.full) return task();
    this.logger.warn({ msg: 'storage full: put off until writes resume', what });
    this.deferred.push({ what, task });
  }

  private runDeferred(): void {
    const due = this.deferred;
    this.deferred = [];
    for (const { what, task } of due) {
      void asBackground(task).catch((err: unknown) => {
        if (this.state.full) this.deferred.push({ what, task });
        else this.logger.error({ msg: 'put-off work failed', what, error: (err as Error).message });
      });
    }
  }

  /** Reads the free space and refuses or allows writes accordingly; one check at a time. */
  check(): Promise<void> {
    this.checking ??= this.readAndApply().finally(() => (this.checking = null));
    return this.checking;
  }

  private async readAndApply(): Promise<void> {
    let freeBytes: number;
    let reserve: number;
    try {
      ({ freeBytes, reserveBytes: reserve } = await storageRoom(this.config));
    } catch (err) {
      this.logger.warn({ msg: 'free space not readable', error: (err as Error).message });
      return;
    }
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
    const freed = this.state.full && !full;
    this.state = { full, freeBytes };
    if (freed) this.runDeferred();
  }

  private refuseWrites(refuse: boolean): Promise<unknown> {
    return asBackground(() =>
      this.dataSource.query(`SET default_transaction_read_only = ${refuse ? 'on' : 'off'}`),
    );
  }
}
