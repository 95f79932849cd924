#!/usr/bin/env node
/**
 * `npm run test:all`: the whole suite, as CI runs it, in three Jest runs side by side:
 *
 *   passes          both database passes in one pool of workers (test/jest.all.config.js):
 *                   every file on embedded databases, and test/integration and test/e2e again
 *                   on a real PostgreSQL server
 *   faults-embedded the fault suite on the embedded database (test/faults)
 *   faults-server   the fault suite on the server
 *
 * The fault runs mostly wait (for kills, restarts, an outage of ten seconds, background work to
 * settle) and start first; the passes fill the cores around them. First, side by side, what the
 * suite needs: the build and the models (`npm run models:fetch`, into the shared cache),
 * Chromium (test/support/with-chromium.sh) and the PostgreSQL server (test/support/postgres.sh).
 *
 * Each run's output is shown as it comes, the fault runs' lines prefixed with their name. At the
 * end: each run's time, each pass's counts (passed, failed, skipped and why), the files that
 * run in one pass only and why, and the slowest files; the exit code is non-zero if anything
 * failed. Reports are kept in .test-reports/ (`.ci/run` prints them again in its summary).
 *
 * Options: --only passes|faults (one of the two), and anything after `--` goes to every Jest run
 * (for example a path pattern). KEEPSAKE_TEST_WORKERS sets the pool's workers (3).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildIsFresh } from './build-fresh.mjs';
import { printSummary } from './summary.mjs';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const REPORTS = join(ROOT, '.test-reports');
const JEST = [
  '--experimental-vm-modules',
  '--no-warnings=ExperimentalWarning',
  'node_modules/jest/bin/jest.js',
];

const args = process.argv.slice(2);
const dashes = args.indexOf('--');
const jestArgs = dashes >= 0 ? args.slice(dashes + 1) : [];
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 && (dashes < 0 || onlyAt < dashes) ? args[onlyAt + 1] : null;

/** Runs a command, its output prefixed (or not), and answers its exit code and seconds. */
function run(name, command, argv, { env = {}, prefix = true, capture = false } = {}) {
  const started = Date.now();
  return new Promise((done) => {
    const childEnv = { ...process.env, ...env };
    for (const [key, value] of Object.entries(env)) if (value === undefined) delete childEnv[key];
    const child = spawn(command, argv, {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const relay = (stream, target) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        if (capture) out += chunk;
        if (!prefix) return void target.write(chunk);
        const lines = (partial + chunk).split('\n');
        partial = lines.pop();
        for (const line of lines) target.write(`[${name}] ${line}\n`);
      });
      stream.on('end', () => {
        if (prefix && partial) target.write(`[${name}] ${partial}\n`);
      });
    };
    relay(child.stdout, process.stdout);
    relay(child.stderr, process.stderr);
    child.on('close', (code, signal) =>
      done({ name, code: code ?? (signal ? 1 : 0), seconds: (Date.now() - started) / 1000, out }),
    );
  });
}

const runs = [];
const record = (r) => {
  runs.push({ name: r.name, seconds: Math.round(r.seconds), code: r.code });
  return r;
};

rmSync(REPORTS, { recursive: true, force: true });
mkdirSync(REPORTS, { recursive: true });

// What the suite needs, side by side. The models' command builds first; after `.ci/run`'s own
// build (or any fresh one) the fetch runs without building again.
const fetchModels = buildIsFresh(ROOT)
  ? ['node', ['dist/src/llm/cli/models-fetch.js', '--all', '--llm', 'smollm2-135m']]
  : ['npm', ['run', 'models:fetch', '--silent', '--', '--all', '--llm', 'smollm2-135m']];
const ready = await Promise.all([
  run('build and models', ...fetchModels),
  run('chromium', 'bash', ['test/support/with-chromium.sh', 'true']),
  run('postgres', 'bash', ['test/support/postgres.sh', 'start'], { capture: true }),
]);
ready.forEach(record);
const failedFirst = ready.filter((r) => r.code !== 0);
if (failedFirst.length > 0) {
  console.error(`test:all: ${failedFirst.map((r) => r.name).join(', ')} failed; no test ran.`);
  process.exit(1);
}
const serverUrl = ready[2].out.trim().split('\n').pop();

const report = (name) => join(REPORTS, `${name}.json`);
const faults = (name, env) =>
  run(name, process.execPath, [...JEST, '--config', 'test/faults/jest.config.js', ...jestArgs], {
    env: { KEEPSAKE_TEST_PASS: name, KEEPSAKE_TEST_REPORT: report(name), ...env },
  });
const started = [];
if (only !== 'passes') {
  // The embedded run has no server URL at all.
  started.push(faults('faults-embedded', { TEST_DATABASE_URL: undefined }));
  started.push(faults('faults-server', { TEST_DATABASE_URL: serverUrl }));
}
if (only !== 'faults') {
  // A little below the fault runs, whose waits for a restart or a refusal are what they measure.
  started.push(
    run(
      'passes',
      'nice',
      ['-n', '3', process.execPath, ...JEST, '--config', 'test/jest.all.config.js', ...jestArgs],
      {
        env: { TEST_DATABASE_URL: serverUrl, KEEPSAKE_TEST_REPORT: report('passes') },
        prefix: false,
      },
    ),
  );
}
(await Promise.all(started)).forEach(record);
writeFileSync(join(REPORTS, 'runs.json'), JSON.stringify(runs, null, 1));

const ok = printSummary(REPORTS);
process.exit(ok && runs.every((r) => r.code === 0) ? 0 : 1);
