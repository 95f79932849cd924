import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { onePassFiles } from './passes.mjs';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const pad = (value, width) => String(value).padStart(width);
const minutes = (s) => `${Math.floor(s / 60)} min ${pad(Math.round(s % 60), 2)} s`;

/**
 * Prints what a test run left in `dir` (.test-reports): the test runs' times (runs.json) and
 * each pass's counts from the reports pass-reporter.mjs wrote (every other *.json), after
 * `.ci/run`'s phases when given (`phases`: one JSON object a line, {name, seconds, code}).
 * Answers whether everything passed: no failed test, no file that could not run, no phase or
 * run that failed, and at least one test run.
 */
export function printSummary(dir, phases = null) {
  const lines = ['', '================ summary ================'];
  let ok = true;
  const timed = [];
  if (phases) {
    timed.push([
      'phase',
      readFileSync(phases, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ]);
  }
  if (existsSync(join(dir, 'runs.json')))
    timed.push(['test:all', readJson(join(dir, 'runs.json'))]);
  for (const [title, list] of timed) {
    lines.push(`${title.padEnd(31)} time`);
    for (const p of list) {
      if (p.code !== 0) ok = false;
      lines.push(
        `  ${p.name.padEnd(28)} ${minutes(p.seconds).padStart(12)}${p.code === 0 ? '' : `  FAILED (exit ${p.code})`}`,
      );
    }
  }

  const files = (existsSync(dir) ? readdirSync(dir) : [])
    .filter((f) => f.endsWith('.json') && f !== 'runs.json')
    .flatMap((f) => readJson(join(dir, f)).files);
  const passes = new Map();
  for (const f of files) {
    const p = passes.get(f.pass) ?? {
      files: 0,
      passed: 0,
      failed: 0,
      skipped: 0,
      errors: [],
      cpu: 0,
    };
    p.files++;
    p.cpu += f.cpu ?? 0;
    p.passed += f.passed;
    p.failed += f.failed;
    p.skipped += f.skipped;
    if (f.error) p.errors.push(f);
    passes.set(f.pass, p);
  }
  lines.push('pass                  files   passed   failed  skipped   CPU (s)');
  const cpuText = (cpu) => pad(cpu ? Math.round(cpu) : '-', 9);
  let ran = 0;
  for (const [name, p] of passes) {
    ran += p.passed + p.failed;
    if (p.failed > 0 || p.errors.length > 0) ok = false;
    lines.push(
      `  ${name.padEnd(18)} ${pad(p.files, 6)} ${pad(p.passed, 8)} ${pad(p.failed, 8)} ${pad(p.skipped, 8)}${cpuText(p.cpu)}` +
        (p.errors.length ? `  (${p.errors.length} files could not run)` : ''),
    );
    for (const f of p.errors)
      lines.push(`      could not run: ${f.file}: ${f.error.split('\n')[0]}`);
  }
  if (passes.size > 0) {
    const total = [...passes.values()].reduce(
      (t, p) => ({
        passed: t.passed + p.passed,
        failed: t.failed + p.failed,
        skipped: t.skipped + p.skipped,
        cpu: t.cpu + p.cpu,
      }),
      { passed: 0, failed: 0, skipped: 0, cpu: 0 },
    );
    lines.push(
      `  ${'all'.padEnd(18)} ${pad(files.length, 6)} ${pad(total.passed, 8)} ${pad(total.failed, 8)} ${pad(total.skipped, 8)}${cpuText(total.cpu)}`,
    );
  }
  if (ran === 0) {
    ok = false;
    lines.push('  no test ran');
  }

  const onePass = onePassFiles(ROOT);
  if (onePass.length > 0) {
    lines.push('run in one database pass only (@pass):');
    for (const m of onePass) lines.push(`  ${m.pass}: ${m.file}: ${m.why}`);
  }
  const skipped = files.flatMap((f) =>
    f.skippedBlocks.map((s) => ({ ...s, pass: f.pass, file: f.file })),
  );
  if (skipped.length > 0) {
    lines.push('skipped where they cannot run (the block says why):');
    for (const s of skipped) lines.push(`  ${s.pass}: ${s.file}: ${s.block} (${s.tests})`);
  }
  if (files.length > 0) {
    lines.push('slowest files (wall, then CPU: on a shared machine CPU says what a file costs):');
    for (const f of [...files].sort((a, b) => b.seconds - a.seconds).slice(0, 10)) {
      const cpu = f.cpu == null ? '' : `${pad(f.cpu.toFixed(1), 7)} s`;
      lines.push(
        `  ${pad(f.seconds.toFixed(1), 7)} s ${cpu.padStart(9)}  ${f.pass.padEnd(16)} ${f.file}`,
      );
    }
  }
  const failedFiles = files.filter((f) => f.failed > 0 || f.error);
  if (failedFiles.length > 0) {
    lines.push('FAILED:');
    for (const f of failedFiles) lines.push(`  ${f.pass}: ${f.file} (${f.failed} failed)`);
  }
  lines.push(ok ? 'result: passed' : 'result: FAILED');
  process.stdout.write(lines.join('\n') + '\n');
  return ok;
}

// `node test/support/summary.mjs [--phases FILE]` prints it again (what `.ci/run` does at its end).
if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const at = process.argv.indexOf('--phases');
  const phases = at > 0 ? process.argv[at + 1] : null;
  process.exit(printSummary(join(ROOT, '.test-reports'), phases) ? 0 : 1);
}
