import { readFileSync } from 'node:fs';
import Sequencer from '@jest/test-sequencer';

/**
 * The longest files first, so that none starts near the end of a run and leaves the other
 * workers idle while it finishes. Jest's own order uses each file's time in its last run, kept in
 * its cache, and the file's size otherwise; a clean clone (CI) has no cache, and size alone
 * put the files that run a real model or a browser, small but among the longest, past the
 * middle. So a file is weighed by its size and by what it starts: a real model (the packaged
 * language model, a fetched encoder), a browser, service processes or servers of its own, each
 * test app. A file Jest has timed before is placed by its time, as Jest places it.
 */
const WEIGHTS = [
  // The packaged instruct model or a fetched encoder: seconds of inference per call.
  [/support\/packaged-model\.js|EMBEDDINGS_LOCAL_MODEL: '(e5|bge)/g, 40_000, 1],
  // A browser, and the pages it loads.
  [/launchChromium\(/g, 20_000, 1],
  // The service as a process, or PostgreSQL servers of its own: boots and waits.
  [/service-process|PgServer|postgres\.sh/g, 20_000, 1],
  // WordNet read by the service (SEARCH_KINDS on).
  [/SEARCH_KINDS: 'true'/g, 10_000, 1],
  // Each app the file starts.
  [/startTestApp\(/g, 3_000, 6],
];

export function weight(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 0;
  }
  let w = text.length;
  for (const [pattern, each, most] of WEIGHTS) {
    w += each * Math.min(most, (text.match(pattern) ?? []).length);
  }
  return w;
}

export default class LongestFirst extends (Sequencer.default ?? Sequencer) {
  /** Jest's order (failed last time first, then the files never timed, then by time), weighed. */
  sort(tests) {
    const weights = new Map();
    const weightOf = (path) => {
      if (!weights.has(path)) weights.set(path, weight(path));
      return weights.get(path);
    };
    for (const test of tests) test.duration = this.time(test);
    return [...tests].sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      const timedA = a.duration != null;
      if (timedA !== (b.duration != null)) return timedA ? 1 : -1;
      if (timedA) return b.duration - a.duration;
      return weightOf(b.path) - weightOf(a.path);
    });
  }
}
