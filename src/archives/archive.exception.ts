import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum ArchiveErrorCode {
  ARCHIVE_NOT_FOUND = 'ARCHIVE_NOT_FOUND',
  /** Not a ZIP, or a ZIP that is damaged. */
  INVALID_ARCHIVE = 'INVALID_ARCHIVE',
  /** A ZIP that is not a Keepsake legacy archive, or one of a format version this one cannot read. */
  UNSUPPORTED_ARCHIVE = 'UNSUPPORTED_ARCHIVE',
  /** Over ARCHIVE_IMPORT_MAX_BYTES, or unpacking past its caps (entries, sizes). */
  TOO_LARGE = 'TOO_LARGE',
  /** Not finished yet (or failed, or expired): nothing to download or import. */
  NOT_READY = 'NOT_READY',
  /** An uploaded archive already imported, or being imported. */
  ALREADY_IMPORTED = 'ALREADY_IMPORTED',
  /** The stories would take more than MEMBER_STORAGE_MAX_BYTES of the importer's room. */
  STORAGE_FULL = 'STORAGE_FULL',
}

const CODES: Record<ArchiveErrorCode, PublicErrorCode> = {
  ARCHIVE_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  INVALID_ARCHIVE: PublicErrorCode.BAD_USER_INPUT,
  UNSUPPORTED_ARCHIVE: PublicErrorCode.BAD_USER_INPUT,
  TOO_LARGE: PublicErrorCode.BAD_USER_INPUT,
  NOT_READY: PublicErrorCode.CONFLICT,
  ALREADY_IMPORTED: PublicErrorCode.CONFLICT,
  STORAGE_FULL: PublicErrorCode.BAD_USER_INPUT,
};

export class ArchiveException extends DomainException {
  constructor(code: ArchiveErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  /** Someone else's archive is indistinguishable from a missing one. */
  static notFound(): ArchiveException {
    return new ArchiveException(ArchiveErrorCode.ARCHIVE_NOT_FOUND, 'Archive not found.');
  }

  static invalid(message: string, field = 'file'): ArchiveException {
    return new ArchiveException(ArchiveErrorCode.INVALID_ARCHIVE, message, field);
  }
}
