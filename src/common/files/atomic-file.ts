import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Writes a file's bytes to disk before anything names it: a crash leaves it whole or absent. */
function writeDurably(path: string, data: string | Uint8Array, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The directory entry itself, so that a rename or link survives a power cut. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not every filesystem lets a directory be opened or synced; the rename stands all the same.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const scratchName = (path: string) => join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);

/**
 * Creates `path` holding `data` unless it exists: never half-written (a kill leaves the file
 * whole or absent) and never clobbered (of two processes creating it at once, one wins and the
 * other gets false). Answers whether this call created it.
 */
export function createFileOnce(path: string, data: string | Uint8Array, mode = 0o600): boolean {
  const scratch = scratchName(path);
  writeDurably(scratch, data, mode);
  try {
    linkSync(scratch, path);
    syncDirectory(dirname(path));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(scratch, { force: true });
  }
}

/** Replaces `path` with `data` in one step: readers see the old bytes or the new, never a mix. */
export function replaceFile(path: string, data: string | Uint8Array, mode = 0o600): void {
  const scratch = scratchName(path);
  try {
    writeDurably(scratch, data, mode);
    renameSync(scratch, path);
    syncDirectory(dirname(path));
  } finally {
    rmSync(scratch, { force: true });
  }
}
