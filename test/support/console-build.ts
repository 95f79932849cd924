import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve('.');
export const WEB_INDEX = join(ROOT, 'dist/web/index.html');

function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(
    0,
    ...readdirSync(path)
      .filter((entry) => entry !== 'gql')
      .map((entry) => newest(join(path, entry))),
  );
}

/**
 * Builds the console into dist/web (codegen, then Vite) unless it is newer than web/ and
 * schema.gql: the tests that load /app need the files the service serves.
 */
export function ensureConsoleBuilt(): void {
  const sources = Math.max(newest(join(ROOT, 'web')), newest(join(ROOT, 'schema.gql')));
  if (existsSync(WEB_INDEX) && statSync(WEB_INDEX).mtimeMs >= sources) return;
  execFileSync('npm', ['run', 'web:build', '--silent'], { cwd: ROOT, stdio: 'pipe' });
}
