import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every path under `dir` (itself included) that group or others may read, write or enter. */
export function openToOthers(dir: string): string[] {
  const open: string[] = [];
  const visit = (path: string) => {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) return;
    if (info.mode & 0o077) open.push(`${(info.mode & 0o777).toString(8)} ${path}`);
    if (info.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
  };
  visit(dir);
  return open;
}

/** Opens a tree up as the versions before 44 left it: folders 0755, files 0666. */
export function openUp(dir: string): void {
  const visit = (path: string) => {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) return;
    chmodSync(path, info.isDirectory() ? 0o755 : 0o666);
    if (info.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
  };
  visit(dir);
}
