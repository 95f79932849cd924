import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Group and other permission bits: a family's files carry none of them. */
const NOT_OWNER = 0o077;

/** DATA_DIR cannot be made the service user's alone: the service does not start on it. */
export class DataDirPermissionError extends Error {}

/**
 * Everything the process creates from now on is its user's alone (0700 folders, 0600 files),
 * whatever umask it was started with. Set where a process that writes a family's files starts;
 * a worker thread cannot set it, and shares its process's.
 */
export function keepNewFilesPrivate(): void {
  try {
    const before = process.umask(NOT_OWNER);
    process.umask(before | NOT_OWNER);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_UNSUPPORTED_OPERATION') throw err;
  }
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

export interface PrivateDirReport {
  dir: string;
  /** The directory's own mode before, when other users could reach into it. */
  wasOpen: string | null;
  /** Folders and files under it whose group or other bits were taken away. */
  tightened: number;
}

/**
 * Makes `dir` (created if missing) and everything in it its owner's alone: 0700 for folders,
 * the group and other bits off every file, as PostgreSQL requires of its own data directory.
 * Symbolic links are not followed. A directory that belongs to another user, or anything in it
 * this process may not change, is refused with how to fix it: its owner could read it all.
 */
export function securePrivateDir(dir: string, name = 'DATA_DIR'): PrivateDirReport {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const uid = process.geteuid?.();
  const info = statSync(root);
  if (!info.isDirectory()) throw new DataDirPermissionError(`${name} ${root} is not a directory.`);
  if (uid !== undefined && info.uid !== uid) {
    throw new DataDirPermissionError(
      `${name} ${root} belongs to uid ${info.uid}, not to uid ${uid} that Keepsake runs as: ` +
        "whoever owns it can read every family's data in it. Give it to the service user " +
        `(chown -R ${uid} ${root}) or run Keepsake as its owner.`,
    );
  }
  const report: PrivateDirReport = {
    dir: root,
    wasOpen: info.mode & NOT_OWNER ? octal(info.mode) : null,
    tightened: 0,
  };
  tighten(root, info.mode, name, report);
  walk(root, name, report);
  return report;
}

function tighten(path: string, mode: number, name: string, report: PrivateDirReport): void {
  if (!(mode & NOT_OWNER)) return;
  try {
    chmodSync(path, mode & ~NOT_OWNER & 0o7777);
  } catch (err) {
    throw new DataDirPermissionError(
      `${path} in ${name} is open to other users (mode ${octal(mode)}) and Keepsake cannot ` +
        `make it private (${(err as NodeJS.ErrnoException).code}): give it to the service user ` +
        `(chown) or remove it, then start again.`,
    );
  }
  if (path !== report.dir) report.tightened++;
}

function walk(dir: string, name: string, report: PrivateDirReport): void {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    let info;
    try {
      info = lstatSync(path);
    } catch {
      continue; // gone meanwhile
    }
    if (info.isSymbolicLink()) continue;
    tighten(path, info.mode, name, report);
    if (info.isDirectory()) walk(path, name, report);
  }
}

/** What to log when `securePrivateDir` had to close something; null when all was private. */
export function tighteningNotice(report: PrivateDirReport): Record<string, unknown> | null {
  if (!report.wasOpen && report.tightened === 0) return null;
  return {
    msg: 'the data directory was open to other users: made private',
    dir: report.dir,
    ...(report.wasOpen ? { wasMode: report.wasOpen } : {}),
    tightened: report.tightened,
  };
}
