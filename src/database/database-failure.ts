import { DatabaseException } from './database.exception.js';

/** PostgreSQL's codes for a server that is going away, starting, or not reachable. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
  '08006', // connection_failure
  '53300', // too_many_connections
]);

/** Node's codes for a connection refused, reset or timed out. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** What `pg`, its pool and the embedded database's thread say when the connection is gone. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|the database thread exited|the database is (closed|reopening)|Connection is not established/i;

/**
 * The domain exception a database failure stands for, or null when `err` is something else (a
 * constraint, a bug: those stay what they are). `writesRefused`: the embedded database was made
 * read-only because its disk is nearly full, so a refused write is that, not a standby.
 */
export function databaseFailure(err: unknown, writesRefused = false): DatabaseException | null {
  if (err instanceof DatabaseException) return err;
  const seen = new Set<unknown>();
  for (
    let e = err as
      { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown } | undefined;
    e && !seen.has(e);
  ) {
    seen.add(e);
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (code === '53100' || code === 'ENOSPC') return DatabaseException.storageFull();
    // read_only_sql_transaction: the embedded database refusing writes on a full disk, or a
    // server that is (now) a standby, as during a failover.
    if (code === '25006') {
      return writesRefused ? DatabaseException.storageFull() : DatabaseException.unavailable();
    }
    if (code && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) {
      return DatabaseException.unavailable();
    }
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) {
      return DatabaseException.unavailable();
    }
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return null;
}
