import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import yazl from 'yazl';
import { ARCHIVE_FORMAT, ArchivePart, PART_PATHS, PARTS } from './archive-format.js';
import { ArchiveReader, BLANK_LINE_MAX_BYTES, BLANK_LINES_MAX } from './archive-reader.js';
import { ArchiveException } from './archive.exception.js';

/**
 * Reading a part holds it to keepsake.json as it unpacks: its declared count (a line past it
 * fails there; a part that ends short fails at its end), a small allowance of blank lines never
 * buffered, a longest line refused as soon as it is that long.
 */
const dir = mkdtempSync(join(tmpdir(), 'archive-reader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const limits = {
  maxEntries: 20,
  maxUnzippedBytes: 512 * 1024 * 1024,
  maxFileBytes: 1024,
  maxLineBytes: 4096,
};

let n = 0;
async function archive(facts: string | Buffer, count: number): Promise<ArchiveReader> {
  const zip = new yazl.ZipFile();
  const manifest = {
    format: ARCHIVE_FORMAT,
    version: 1,
    exportedAt: '2026-11-28T10:00:00.000Z',
    exportedBy: { id: 'u1', displayName: null },
    legacy: { id: 'l1', name: 'Joe', createdAt: '2026-01-01T00:00:00.000Z' },
    people: [],
    parts: Object.fromEntries(
      PARTS.map((p) => [p, { path: PART_PATHS[p], count: p === 'facts' ? count : 0 }]),
    ),
  };
  zip.addBuffer(Buffer.from(JSON.stringify(manifest)), 'keepsake.json');
  for (const part of PARTS) {
    zip.addBuffer(part === 'facts' ? Buffer.from(facts) : Buffer.alloc(0), PART_PATHS[part]);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream.pipe(new PassThrough())) chunks.push(c as Buffer);
  const path = join(dir, `a${++n}.zip`);
  writeFileSync(path, Buffer.concat(chunks));
  return ArchiveReader.open(path, limits);
}

async function read(reader: ArchiveReader, part: ArchivePart = 'facts', skip = 0) {
  const lines: [number, string][] = [];
  try {
    for await (const { line, text } of reader.lines(part, skip)) lines.push([line, text]);
    return lines;
  } finally {
    reader.close();
  }
}

async function refusal(reader: ArchiveReader): Promise<{ reason: string; message: string }> {
  try {
    await read(reader);
  } catch (err) {
    expect(err).toBeInstanceOf(ArchiveException);
    return { reason: (err as ArchiveException).reason, message: (err as Error).message };
  }
  throw new Error('not refused');
}

describe('ArchiveReader.lines', () => {
  it('reads the declared lines, a few blank ones and a last one without its newline', async () => {
    expect(await read(await archive('{"a":1}\n\n  \r\n{"a":2}\n{"a":3}', 3))).toEqual([
      [1, '{"a":1}'],
      [4, '{"a":2}'],
      [5, '{"a":3}'],
    ]);
    // From a cursor: the lines after it, numbered as before.
    expect(await read(await archive('{"a":1}\n\n{"a":2}\n{"a":3}\n', 3), 'facts', 3)).toEqual([
      [4, '{"a":3}'],
    ]);
  });

  it('stops at the first line past the declared count, and refuses a part that ends short', async () => {
    const more = await refusal(await archive('{"a":1}\n{"a":2}\n{"a":3}\n', 1));
    expect(more).toEqual({
      reason: 'INVALID_ARCHIVE',
      message:
        'data/facts.jsonl, line 2: keepsake.json declares 1 line for this part; this is one more.',
    });
    const fewer = await refusal(await archive('{"a":1}\n', 2));
    expect(fewer.message).toBe('data/facts.jsonl holds 1 line; keepsake.json declares 2.');
  });

  it('refuses blank lines past a small allowance, long before the part ends', async () => {
    // A megabyte of newlines: refused at the first blank line past BLANK_LINES_MAX, not read on.
    const blank = await refusal(
      await archive(Buffer.concat([Buffer.from('{"a":1}\n'), Buffer.alloc(1 << 20, 10)]), 1),
    );
    expect(blank.message).toMatch(
      new RegExp(
        `^data/facts\\.jsonl has more than ${BLANK_LINES_MAX} blank lines \\(line ${BLANK_LINES_MAX + 2} is one more\\)`,
      ),
    );
    // A line of nothing but spaces, however long, is refused once it passes the bound.
    const spaces = await refusal(await archive(' '.repeat(BLANK_LINE_MAX_BYTES + 1), 0));
    expect(spaces.message).toBe(
      `data/facts.jsonl, line 1: more than ${BLANK_LINE_MAX_BYTES} bytes of blank space.`,
    );
  });

  it('refuses a line past the longest an archive may hold, and one that is not UTF-8', async () => {
    const long = await refusal(await archive(`{"a":"${'x'.repeat(limits.maxLineBytes)}"}\n`, 1));
    expect(long).toEqual({
      reason: 'TOO_LARGE',
      message: `data/facts.jsonl, line 1, is longer than ${limits.maxLineBytes} bytes, the longest line an archive may hold.`,
    });
    const latin1 = await refusal(await archive(Buffer.from('{"a":"caf\xe9"}\n', 'latin1'), 1));
    expect(latin1.message).toBe('data/facts.jsonl, line 1: not UTF-8 text');
  });
});
