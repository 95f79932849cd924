import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { serviceBuildIsFresh } from './build-fresh.mjs';
import { ensureConsoleBuilt } from './console-build.mjs';
import { dropRunDatabases } from './server-databases.mjs';

const ROOT = resolve('.test-dbs');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * The migrated template databases this project's files copy, made here before any worker starts
 * (so outside every test's timeout, with the machine not yet busy with tests) when a fresh build
 * of test/support/test-database.ts is at hand, as `npm run test:all` and `.ci/run` leave it;
 * otherwise the first test file to need one makes it. `embedded` and `server` are the two
 * passes of test/jest.all.config.js; a plain run makes the one of its database.
 */
async function prepareTemplates(project) {
  if (!serviceBuildIsFresh(resolve('.'))) return;
  const pass = project?.displayName?.name;
  const embedded = pass ? pass === 'embedded' : !process.env.TEST_DATABASE_URL;
  const { ensureTemplate } = await import('../../dist/test/support/test-database.js');
  await ensureTemplate(embedded);
}

// Each run has a directory of its own (.test-dbs/run-<pid>), so two runs in one checkout do not
// delete each other's databases; what a killed run left behind is removed here.
export async function setup(project, { templates }) {
  mkdirSync(ROOT, { recursive: true });
  for (const entry of readdirSync(ROOT)) {
    // The fault suite's folders (faults/<name>-<pid>) are left to theirs while that run lives.
    if (entry === 'faults') {
      for (const dir of readdirSync(join(ROOT, entry))) {
        const owner = /-(\d+)$/.exec(dir)?.[1];
        if (!owner || !alive(Number(owner))) {
          rmSync(join(ROOT, entry, dir), { recursive: true, force: true });
        }
      }
      continue;
    }
    const pid = /^run-(\d+)$/.exec(entry)?.[1];
    if (!pid || !alive(Number(pid))) rmSync(join(ROOT, entry), { recursive: true, force: true });
  }
  // On a real server (TEST_DATABASE_URL), the databases of runs that are no longer alive.
  await dropRunDatabases((pid) => !alive(pid));
  // The console's files, for the tests that load /app (once, before the workers start).
  ensureConsoleBuilt();
  // Jest starts its workers after this, and they inherit the variable.
  process.env.KEEPSAKE_TEST_DB_ROOT = join(ROOT, `run-${process.pid}`);
  if (templates) await prepareTemplates(project);
}

export default async function globalSetup(_globalConfig, project) {
  await setup(project, { templates: true });
}
