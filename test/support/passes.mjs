import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Which of the suite's two database passes a test file runs in (`npm run test:all`).
 *
 * The embedded pass runs every file. The server pass runs the files of test/integration and
 * test/e2e again on a real PostgreSQL server. A file there that runs in one pass only says so in
 * its first comment, with the reason, which the run prints:
 *
 *   @pass embedded: <why the server pass would check nothing more>
 *   @pass server: <why it cannot run on the embedded database>
 *
 * Everything else under those folders (and every new file) runs in both.
 */
export const SERVER_PASS_DIRS = ['test/integration', 'test/e2e'];

const SPEC = /\.(spec|e2e-spec)\.ts$/;
const MARK = /^\s*(?:\*|\/\/)\s*@pass (embedded|server):\s*(.+)$/m;

function specFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) =>
    e.isDirectory() ? specFiles(join(dir, e.name)) : SPEC.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The file's `@pass` mark, read from its first 4 KB (its opening comments), or null. */
export function passMark(file) {
  const fd = openSync(file, 'r');
  let text;
  try {
    const buffer = Buffer.alloc(4096);
    text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
  const m = MARK.exec(text);
  if (!m) return null;
  // A reason may run over the comment's next lines, up to a blank line, a tag or the comment's end.
  const why = [m[2]];
  for (const line of text
    .slice(m.index + m[0].length)
    .split('\n')
    .slice(1)) {
    if (/^\s*\*\//.test(line)) break;
    const l = line.replace(/^\s*(\*|\/\/)\s?/, '').trim();
    if (l === '' || l.startsWith('@') || !/^\s*(\*|\/\/)/.test(line)) break;
    why.push(l);
  }
  return {
    pass: m[1],
    why: why
      .join(' ')
      .replace(/\s*\*\/\s*$/, '')
      .trim(),
  };
}

/** The files of the server pass's folders that run in one pass only, with the reason. */
export function onePassFiles(rootDir) {
  const marked = [];
  for (const dir of SERVER_PASS_DIRS) {
    for (const file of specFiles(join(rootDir, dir))) {
      const mark = passMark(file);
      if (mark) marked.push({ file: relative(rootDir, file), ...mark });
    }
  }
  return marked.sort((a, b) => a.file.localeCompare(b.file));
}

/** A testPathIgnorePatterns entry for exactly this file. */
export function exactly(rootDir, file) {
  return `^${join(rootDir, file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}
