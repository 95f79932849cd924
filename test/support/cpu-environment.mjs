import { appendFileSync, readFileSync } from 'node:fs';
import { TestEnvironment } from 'jest-environment-node';

/** CPU seconds of the processes this one started and has ended (a browser, the service). */
function childrenSeconds() {
  try {
    // /proc/self/stat after the command's name: field 16 is cutime, 17 cstime (ticks of 1/100 s).
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

function cpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6 + childrenSeconds();
}

/**
 * Jest's node environment, which also records each test file's CPU time: its worker's (threads
 * included: the embedded database's, the encoders') and that of the processes it started and
 * ended. Wall time says little on a shared machine; CPU time says what a file costs. Written
 * beside the run's report (KEEPSAKE_TEST_REPORT), which pass-reporter.mjs completes with it.
 */
export default class CpuTimedEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.pass = config.projectConfig.displayName?.name ?? process.env.KEEPSAKE_TEST_PASS ?? 'tests';
    this.started = cpuSeconds();
  }

  async teardown() {
    await super.teardown();
    const out = process.env.KEEPSAKE_TEST_REPORT;
    if (!out) return;
    const seconds = Math.round((cpuSeconds() - this.started) * 10) / 10;
    appendFileSync(
      `${out}.cpu`,
      `${JSON.stringify({ pass: this.pass, path: this.testPath, cpu: seconds })}\n`,
    );
  }
}
