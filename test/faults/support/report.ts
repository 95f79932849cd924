import { appendFileSync } from 'node:fs';
import { sleep } from './service.js';

/**
 * A figure of the fault suite: printed as it is (Jest's console would wrap it in a stack) and,
 * with FAULT_REPORT set, appended to that file too.
 */
export function report(line: string): void {
  process.stderr.write(`\n[faults] ${line}\n`);
  if (process.env.FAULT_REPORT) appendFileSync(process.env.FAULT_REPORT, `${line}\n`);
}

/** A gauge's total over its label sets in a Prometheus scrape, for the lines that match `labels`. */
export function gauge(scrape: string, name: string, labels = ''): number {
  let total = 0;
  for (const line of scrape.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    if (labels && !rest.includes(labels)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Waits until the background work is done, as /metrics tells it: no job running, none due,
 * no vector missing; answers how long that took. Three quiet scrapes in a row, since a job that
 * finishes may enqueue the next.
 */
export async function settle(base: string, timeoutMs = 600_000): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  let last = '';
  while (quiet < 3) {
    if (performance.now() - started > timeoutMs) {
      throw new Error(`background work did not settle within ${timeoutMs} ms:\n${last}`);
    }
    await sleep(500);
    const res = await fetch(`${base}/metrics`);
    last = await res.text();
    const busy =
      gauge(last, 'keepsake_jobs', 'status="RUNNING"') +
      gauge(last, 'keepsake_job_oldest_due_seconds') +
      gauge(last, 'keepsake_embedding_backlog');
    quiet = busy === 0 ? quiet + 1 : 0;
  }
  return performance.now() - started;
}
