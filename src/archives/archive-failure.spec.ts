import { QueryFailedError } from 'typeorm';
import { CommonErrorCode, CommonException } from '../common/errors/domain.exception.js';
import { DatabaseException } from '../database/database.exception.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import {
  ArchiveImportFailed,
  deterministicFailure,
  detailOf,
  finalReason,
  IMPORT_GAVE_UP,
} from './archive-failure.js';
import { ArchiveException } from './archive.exception.js';

/** PostgreSQL's error as TypeORM hands it over: its text, and its SQLSTATE on the driver's error. */
function pgError(code: string, message: string): QueryFailedError {
  return new QueryFailedError('INSERT ...', [], Object.assign(new Error(message), { code }));
}

describe('archive failures', () => {
  const where = 'data/facts.jsonl, lines 1 to 50';

  it('fails at once, in its own words and placed, what would fail on every try', () => {
    for (const [code, raw] of [
      ['22008', 'timestamp out of range: "100001-01-01T00:00:00.000+00:00 BC"'],
      ['22021', 'invalid byte sequence for encoding "UTF8": 0x00'],
      ['22P05', 'unsupported Unicode escape sequence'],
      ['23514', 'new row for relation "facts" violates check constraint "facts_content_check"'],
    ]) {
      const failure = deterministicFailure(pgError(code, raw), where)!;
      expect(failure.code).toBe('INVALID_ARCHIVE');
      expect(failure.reason).toMatch(
        /^data\/facts\.jsonl, lines 1 to 50: a value there cannot be kept/,
      );
      expect(failure.reason).not.toContain(raw.slice(0, 12));
    }
    // Keepsake's own refusal keeps its reason and words, and is told where.
    expect(
      deterministicFailure(
        new CommonException(CommonErrorCode.INVALID_INPUT, 'A fact has at most 500 characters.'),
        where,
      ),
    ).toEqual({
      code: 'INVALID_INPUT',
      reason: `${where}: A fact has at most 500 characters.`,
    });
    // A line the reader named already says where.
    const named = ArchiveException.invalid('data/facts.jsonl, line 3: not valid JSON');
    expect(deterministicFailure(named, where)).toEqual({
      code: 'INVALID_ARCHIVE',
      reason: 'data/facts.jsonl, line 3: not valid JSON',
    });
  });

  it('leaves to the job’s retries what may pass on another try', () => {
    for (const err of [
      DatabaseException.unavailable(),
      DatabaseException.busy(2),
      DatabaseException.storageFull(),
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('53100', 'could not extend file: No space left on device'),
      pgError('40001', 'could not serialize access'),
      new CommonException(CommonErrorCode.RATE_LIMITED, 'Try again later.', undefined, 30),
      new JobDeferred(0),
      new Error('something unexpected'),
    ]) {
      expect(deterministicFailure(err, where)).toBeNull();
    }
  });

  it('never gives the database’s words to the member when every try failed', () => {
    const raw = pgError('XX000', 'could not read block 7 in file "base/16384/2619"');
    expect(finalReason(raw, IMPORT_GAVE_UP)).toBe(IMPORT_GAVE_UP);
    expect(detailOf(raw)).toContain('could not read block 7');
    const placed = new ArchiveImportFailed({ code: 'INVALID_ARCHIVE', reason: 'x' }, raw);
    expect(finalReason(placed, IMPORT_GAVE_UP)).toBe('x');
    expect(detailOf(placed)).toContain('could not read block 7');
  });
});
