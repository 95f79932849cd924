import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Newest modification time under a path (0 when missing), what `skip` names left out. */
function newest(path, skip = () => false) {
  if (!existsSync(path) || skip(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((entry) => newest(join(path, entry), skip)));
}

/** Every file under `dir` whose name `match` accepts, recursively. */
function filesUnder(dir, match) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? filesUnder(join(dir, e.name), match)
      : match(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * Whether dist/ (the service) is newer than everything tsconfig.build.json compiles, and holds
 * the worker scripts `npm run build` copies beside it (src/**\/*.mjs; `tsc` alone leaves them out).
 */
export function serviceBuildIsFresh(root) {
  const workers = filesUnder(join(root, 'src'), (name) => name.endsWith('.mjs'));
  for (const source of workers) {
    const copy = join(root, 'dist', source.slice(root.length + 1));
    if (!existsSync(copy) || statSync(copy).mtimeMs < statSync(source).mtimeMs) return false;
  }
  // tsc writes only the files whose output changed: the newest of them tells when it last ran.
  const built = Math.max(
    ...['dist/src', 'dist/migrations', 'dist/bench', 'dist/test'].map((p) => newest(join(root, p))),
  );
  const sources = Math.max(
    ...[
      'src',
      'migrations',
      'bench',
      'test/support',
      'ormconfig.ts',
      'tsconfig.json',
      'tsconfig.build.json',
    ].map((p) => newest(join(root, p), (path) => /\.(spec\.ts|mjs)$/.test(path))),
  );
  return built > 0 && built >= sources;
}

/** Whether `npm run build` has nothing to do: the service's build, and dist/web (the console). */
export function buildIsFresh(root) {
  const web = join(root, 'dist/web/index.html');
  const webSources = Math.max(
    newest(join(root, 'web'), (path) => path.endsWith('/gql')),
    newest(join(root, 'schema.gql')),
  );
  return serviceBuildIsFresh(root) && existsSync(web) && statSync(web).mtimeMs >= webSources;
}
