import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ArchiveRepository } from './archive.repository.js';

export type StoredIn = 'directory' | 'database';

/** Bytes per row of legacy_archive_chunks: few statements, each of bounded size. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Files left in the scratch directory by a process that died are removed after this. */
const SCRATCH_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** The store's directory and its scratch directory, from the configuration. */
export function archiveDirs(config: AppConfig): { dir: string; scratch: string } {
  const dir = resolve(config.env.ARCHIVE_DIR || join(config.env.DATA_DIR, 'archives'));
  return { dir, scratch: join(dir, 'tmp') };
}

/**
 * Where finished and uploaded archives wait: a directory, or the database in chunks. The
 * directory is the embedded database's (one process by construction) and a server's when
 * ARCHIVE_DIR is shared by every instance; the database lets any instance serve any archive
 * with nothing else to set up. Each archive remembers where it went (`stored_in`), so changing
 * ARCHIVE_STORE leaves the ones already made readable. Files being written or uploaded are
 * kept in a scratch directory beside it (`tmp/`), on this instance's disk.
 */
@Injectable()
export class ArchiveStore implements OnApplicationBootstrap {
  readonly dir: string;
  readonly scratch: string;
  /** Where new archives go. */
  readonly target: StoredIn;

  constructor(
    private readonly repo: ArchiveRepository,
    config: AppConfig,
  ) {
    ({ dir: this.dir, scratch: this.scratch } = archiveDirs(config));
    const store = config.env.ARCHIVE_STORE;
    this.target = store === 'auto' ? (config.embedded ? 'directory' : 'database') : store;
  }

  async onApplicationBootstrap(): Promise<void> {
    await mkdir(this.scratch, { recursive: true, mode: 0o700 });
    // What a killed export or upload left behind; a live one's files are younger.
    const now = Date.now();
    for (const name of await readdir(this.scratch)) {
      const path = join(this.scratch, name);
      const info = await stat(path).catch(() => null);
      if (info && now - info.mtimeMs > SCRATCH_MAX_AGE_MS) await rm(path, { force: true });
    }
  }

  /** A path in the scratch directory: fresh, or `name`'s. */
  async scratchFile(suffix: string, name: string = randomUUID()): Promise<string> {
    await mkdir(this.scratch, { recursive: true, mode: 0o700 });
    return join(this.scratch, `${name}${suffix}`);
  }

  private pathOf(id: string): string {
    return join(this.dir, `${id}.zip`);
  }

  /**
   * Moves a finished file into the store as archive `id` (replacing what a run cut short left),
   * and says where it went and its size. The file at `path` is gone afterwards.
   */
  async put(id: string, path: string): Promise<{ storedIn: StoredIn; sizeBytes: number }> {
    const sizeBytes = (await stat(path)).size;
    if (this.target === 'directory') {
      await rename(path, this.pathOf(id));
      return { storedIn: 'directory', sizeBytes };
    }
    await this.repo.deleteChunks(id);
    let seq = 0;
    // One chunk in memory at a time; each written by a statement of its own, outside any
    // transaction: the archive is not COMPLETED (and so not served) until the last is in.
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
      await this.repo.writeChunk(id, seq++, chunk as Buffer);
    }
    await rm(path, { force: true });
    return { storedIn: 'database', sizeBytes };
  }

  /** The archive's bytes, read as they are sent. */
  open(id: string, storedIn: StoredIn): Readable {
    if (storedIn === 'directory') return createReadStream(this.pathOf(id));
    const repo = this.repo;
    return Readable.from(
      (async function* () {
        for (let seq = 0; ; seq++) {
          const chunk = await repo.readChunk(id, seq);
          if (!chunk) return;
          yield chunk;
        }
      })(),
      { objectMode: false },
    );
  }

  /**
   * A file on this instance's disk holding the archive, for reading by random access (the
   * ZIP's directory is at its end): the stored file itself, or a copy of its chunks.
   */
  async local(
    id: string,
    storedIn: StoredIn,
  ): Promise<{ path: string; release: () => Promise<void> }> {
    if (storedIn === 'directory') return { path: this.pathOf(id), release: async () => {} };
    const path = await this.scratchFile('.zip');
    await pipeline(this.open(id, storedIn), createWriteStream(path, { mode: 0o600 }));
    return { path, release: () => rm(path, { force: true }) };
  }

  async delete(id: string, storedIn: StoredIn | null): Promise<void> {
    if (storedIn === 'database') await this.repo.deleteChunks(id);
    else await rm(this.pathOf(id), { force: true });
  }
}
