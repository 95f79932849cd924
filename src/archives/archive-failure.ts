import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';
import { databaseFailure } from '../database/database-failure.js';
import { JobDeferred } from '../jobs/jobs.exception.js';

/**
 * What a failed archive tells its member: always a sentence of Keepsake's own, naming the file
 * and line where it can, never the text of PostgreSQL or a library (the log has that, for the
 * operator). And whether to try again: a failure that would happen on every try (the archive's
 * content, a limit of the importer's) fails the archive at once; one that may pass (the
 * database busy, away or full, a rate limit, anything not understood) is left to the job's
 * retries.
 */
export interface ArchiveFailure {
  code: string;
  reason: string;
}

/** An import's failure, placed, on its way to the job that records it. */
export class ArchiveImportFailed extends Error {
  constructor(
    readonly failure: ArchiveFailure,
    override readonly cause: unknown,
  ) {
    super(failure.reason);
  }
}

/**
 * SQLSTATE classes of a value the database refuses whatever the moment: data exceptions (22:
 * a date out of range, a NUL, a bad escape), integrity (23: a check), program limits (54).
 */
const DETERMINISTIC_CLASSES = new Set(['22', '23', '54']);

/** A message that already says where (a bad line, named by the reader). */
const PLACED = /^(data\/|keepsake\.json|stories\/)/;

export const IMPORT_GAVE_UP =
  "The import stopped because of a problem on Keepsake's side, and trying again did not help. Nothing of it was kept, and the service's log tells its operator more: upload the archive again later.";

export const EXPORT_GAVE_UP =
  "The archive could not be written because of a problem on Keepsake's side, and trying again did not help. The service's log tells its operator more: ask for a new archive later.";

function sqlState(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let e = err as { code?: unknown; driverError?: unknown; cause?: unknown } | undefined; e;) {
    if (seen.has(e)) return undefined;
    seen.add(e);
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return undefined;
}

/**
 * The failure to record now for an error met while importing `where` (a batch: "data/turns.jsonl,
 * lines 1 to 500"), or null when another try may pass.
 */
export function deterministicFailure(err: unknown, where?: string): ArchiveFailure | null {
  if (err instanceof ArchiveImportFailed) return err.failure;
  if (err instanceof JobDeferred || databaseFailure(err)) return null;
  const at = (message: string) =>
    where && !PLACED.test(message) ? `${where}: ${message}` : message;
  if (err instanceof DomainException) {
    if (
      err.publicCode === PublicErrorCode.UNAVAILABLE ||
      err.publicCode === PublicErrorCode.RATE_LIMITED
    ) {
      return null;
    }
    return { code: err.reason, reason: at(err.message) };
  }
  const state = sqlState(err);
  if (state && DETERMINISTIC_CLASSES.has(state.slice(0, 2))) {
    return {
      code: 'INVALID_ARCHIVE',
      reason: at(
        'a value there cannot be kept (out of the range Keepsake keeps, or not well formed); the archive was changed after Keepsake wrote it, or made by hand',
      ),
    };
  }
  return null;
}

/** The sentence for an archive whose last attempt failed: the error's own if it is Keepsake's. */
export function finalReason(err: unknown, fallback: string): string {
  if (err instanceof ArchiveImportFailed) return err.failure.reason;
  return err instanceof DomainException ? err.message : fallback;
}

/** What the log says of an error the member reads only Keepsake's sentence for. */
export function detailOf(err: unknown): string {
  const cause = err instanceof ArchiveImportFailed ? err.cause : err;
  const inner = (cause as { cause?: unknown })?.cause;
  const text = (e: unknown) => (e instanceof Error ? e.message : String(e));
  return inner ? `${text(cause)} (${text(inner)})` : text(cause);
}
