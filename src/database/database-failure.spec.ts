import { QueryFailedError } from 'typeorm';
import { databaseFailure } from './database-failure.js';
import { DatabaseException } from './database.exception.js';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const reasonOf = (err: unknown, writesRefused = false) =>
  databaseFailure(err, writesRefused)?.reason ?? null;

describe('databaseFailure', () => {
  it('reads a server going away, starting or unreachable as DATABASE_UNAVAILABLE', () => {
    for (const code of [
      '57P01',
      '57P02',
      '57P03',
      '08006',
      '53300',
      'ECONNREFUSED',
      'ECONNRESET',
    ]) {
      expect(reasonOf(pgError(code))).toBe('DATABASE_UNAVAILABLE');
    }
    expect(reasonOf(new Error('Connection terminated unexpectedly'))).toBe('DATABASE_UNAVAILABLE');
    expect(reasonOf(new Error('timeout exceeded when trying to connect'))).toBe(
      'DATABASE_UNAVAILABLE',
    );
    expect(reasonOf(new Error('the database thread exited (1)'))).toBe('DATABASE_UNAVAILABLE');
  });

  it('reads a full disk as DISK_FULL, through the query error TypeORM wraps it in', () => {
    const wrapped = new QueryFailedError(
      'INSERT ...',
      [],
      pgError('53100', 'could not extend file'),
    );
    expect(reasonOf(wrapped)).toBe('DISK_FULL');
    expect(reasonOf(pgError('ENOSPC'))).toBe('DISK_FULL');
  });

  it('reads a refused write as the full disk only where the embedded database refuses them for it', () => {
    const readOnly = pgError('25006', 'cannot execute INSERT in a read-only transaction');
    expect(reasonOf(readOnly, true)).toBe('DISK_FULL');
    // On a server: a standby, as during a failover.
    expect(reasonOf(readOnly, false)).toBe('DATABASE_UNAVAILABLE');
  });

  it('leaves everything else alone, and keeps a retry hint on what it maps', () => {
    expect(reasonOf(pgError('23505', 'duplicate key'))).toBeNull();
    expect(reasonOf(new TypeError('x is undefined'))).toBeNull();
    expect(reasonOf(undefined)).toBeNull();
    const busy = DatabaseException.busy(3);
    expect(databaseFailure(busy)).toBe(busy);
    expect(databaseFailure(pgError('57P01'))?.retryAfterSeconds).toBeGreaterThan(0);
  });
});
