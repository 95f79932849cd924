import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where Vite wrote the console: dist/web. This file runs compiled from dist/src/console/ (the
 * service) or as source from src/console/ (the tests, through ts-jest); null when not built.
 */
export function findWebRoot(): string | null {
  const up = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const dir = basename(up) === 'dist' ? join(up, 'web') : join(up, 'dist', 'web');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}
