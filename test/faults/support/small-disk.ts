import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A small filesystem of its own (tmpfs) for a test to fill up, where this process may mount
 * one: as root on these machines. Elsewhere `mount` answers why not, and the test says it skipped.
 */
export class SmallDisk {
  private ballastFd: number | null = null;

  private constructor(readonly path: string) {}

  /** Mounts a tmpfs of `megabytes` at `path`; null (with the reason) where that is not allowed. */
  static mount(path: string, megabytes: number): SmallDisk | string {
    if (process.platform !== 'linux') return `tmpfs needs Linux (this is ${process.platform})`;
    if (process.getuid?.() !== 0) return 'mounting a small filesystem needs root';
    mkdirSync(path, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0777`, 'tmpfs', path], {
        stdio: 'pipe',
      });
    } catch (err) {
      return `mount refused: ${String((err as { stderr?: unknown }).stderr ?? err).trim()}`;
    }
    return new SmallDisk(path);
  }

  get freeBytes(): number {
    const fs = statfsSync(this.path);
    return fs.bavail * fs.bsize;
  }

  /** Writes a ballast file until only `leaveBytes` are free (0: until the disk is full). */
  fill(leaveBytes = 0): void {
    const file = join(this.path, 'ballast');
    this.ballastFd ??= openSync(file, 'a');
    const chunk = Buffer.alloc(1 << 20, 1);
    for (;;) {
      const room = this.freeBytes - leaveBytes;
      if (room <= 0) return;
      try {
        writeSync(this.ballastFd, chunk, 0, Math.min(chunk.length, room));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return;
        throw err;
      }
    }
  }

  /** Frees what the ballast took. */
  free(): void {
    if (this.ballastFd !== null) closeSync(this.ballastFd);
    this.ballastFd = null;
    rmSync(join(this.path, 'ballast'), { force: true });
  }

  unmount(): void {
    this.free();
    try {
      execFileSync('umount', ['-l', this.path], { stdio: 'pipe' });
    } catch {
      // already gone
    }
  }
}
