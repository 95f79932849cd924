import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve('.');
const WEB_INDEX = join(ROOT, 'dist/web/index.html');

function newest(path) {
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
 * schema.gql: the tests that load /app need the files the service serves. Jest's global setup
 * calls it once, before any worker starts (a build empties dist/web first).
 */
export function ensureConsoleBuilt() {
  const sources = Math.max(newest(join(ROOT, 'web')), newest(join(ROOT, 'schema.gql')));
  if (existsSync(WEB_INDEX) && statSync(WEB_INDEX).mtimeMs >= sources) return;
  // Jest sets NODE_ENV=test, which would give Vite React's development build.
  execFileSync('npm', ['run', 'web:build', '--silent'], {
    cwd: ROOT,
    stdio: 'pipe',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
