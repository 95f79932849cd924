import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';

/**
 * A reporter beside Jest's own: at the end of a run it prints, for each pass (a project's
 * displayName: `embedded`, `server`; or KEEPSAKE_TEST_PASS), how many tests passed, failed and
 * were skipped, what was skipped (the describe blocks that do not run on that database, whose
 * titles say why), and the slowest files. With KEEPSAKE_TEST_REPORT=<file> it also writes all of
 * it as JSON, which `.ci/summary.mjs` reads.
 */
export default class PassReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.files = [];
    this.started = Date.now();
    // What cpu-environment.mjs records in the workers, beside the report.
    this.cpuLog = process.env.KEEPSAKE_TEST_REPORT
      ? `${process.env.KEEPSAKE_TEST_REPORT}.cpu`
      : null;
    if (this.cpuLog) rmSync(this.cpuLog, { force: true });
  }

  /** Each file's CPU seconds, by pass and path, as the workers recorded them. */
  cpuTimes() {
    const times = new Map();
    if (!this.cpuLog || !existsSync(this.cpuLog)) return times;
    for (const line of readFileSync(this.cpuLog, 'utf8').split('\n')) {
      if (!line) continue;
      const { pass, path, cpu } = JSON.parse(line);
      times.set(`${pass} ${relative(this.rootDir, path)}`, cpu);
    }
    return times;
  }

  passOf(test) {
    return test.context.config.displayName?.name ?? process.env.KEEPSAKE_TEST_PASS ?? 'tests';
  }

  onTestResult(test, result) {
    const skipped = new Map();
    for (const a of result.testResults) {
      if (a.status !== 'pending' && a.status !== 'skipped' && a.status !== 'todo') continue;
      const where = a.ancestorTitles.join(' › ') || a.title;
      skipped.set(where, (skipped.get(where) ?? 0) + 1);
    }
    this.files.push({
      pass: this.passOf(test),
      file: relative(this.rootDir, result.testFilePath),
      seconds: Math.round((result.perfStats.end - result.perfStats.start) / 100) / 10,
      passed: result.numPassingTests,
      failed: result.numFailingTests,
      skipped: result.numPendingTests + result.numTodoTests,
      // A file that could not run at all (a syntax error, a failing beforeAll of its module).
      error: result.testExecError ? String(result.testExecError.message).slice(0, 500) : null,
      skippedBlocks: [...skipped].map(([block, tests]) => ({ block, tests })),
    });
  }

  onRunComplete() {
    const cpu = this.cpuTimes();
    const passes = new Map();
    for (const f of this.files) {
      f.cpu = cpu.get(`${f.pass} ${f.file}`) ?? null;
      const p = passes.get(f.pass) ?? {
        files: 0,
        passed: 0,
        failed: 0,
        skipped: 0,
        errors: 0,
        cpu: 0,
      };
      p.files++;
      p.cpu += f.cpu ?? 0;
      p.passed += f.passed;
      p.failed += f.failed;
      p.skipped += f.skipped;
      if (f.error) p.errors++;
      passes.set(f.pass, p);
    }
    const lines = [''];
    for (const [name, p] of passes) {
      lines.push(
        `${name}: ${p.files} files, ${p.passed} passed, ${p.failed} failed, ${p.skipped} skipped` +
          (p.errors ? `, ${p.errors} files did not run` : '') +
          (p.cpu ? `; ${Math.round(p.cpu)} s of CPU in its files` : ''),
      );
      for (const f of this.files.filter((x) => x.pass === name)) {
        for (const s of f.skippedBlocks) {
          lines.push(`  skipped here: ${f.file}: ${s.block} (${s.tests})`);
        }
      }
    }
    const slowest = [...this.files].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
    lines.push('slowest files:');
    for (const f of slowest)
      lines.push(`  ${String(f.seconds).padStart(7)} s  ${f.pass}  ${f.file}`);
    process.stderr.write(lines.join('\n') + '\n');
    const out = process.env.KEEPSAKE_TEST_REPORT;
    if (out) {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(
        out,
        JSON.stringify(
          {
            seconds: Math.round((Date.now() - this.started) / 1000),
            passes: Object.fromEntries(
              [...passes].map(([name, p]) => [name, { ...p, cpu: Math.round(p.cpu) }]),
            ),
            files: this.files,
          },
          null,
          1,
        ),
      );
    }
  }
}
