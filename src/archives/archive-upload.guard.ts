import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { StorageGuard } from '../database/storage-guard.service.js';
import { ArchiveErrorCode, ArchiveException } from './archive.exception.js';

/** What a multipart body may hold besides the file: boundaries, part headers. */
const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;

/**
 * Runs after HttpAuthGuard and before a byte of the file is read: on a full disk the upload is
 * refused (DISK_FULL) as every other write is, and a body declared larger than
 * ARCHIVE_IMPORT_MAX_BYTES is refused at once (multer enforces the limit on what is sent).
 */
@Injectable()
export class ArchiveUploadGuard implements CanActivate {
  constructor(
    private readonly config: AppConfig,
    private readonly storage: StorageGuard,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const refused = this.storage.writesRefused();
    if (refused) throw refused;
    const req = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.config.env.ARCHIVE_IMPORT_MAX_BYTES + MULTIPART_ALLOWANCE_BYTES) {
      throw tooLarge(this.config.env.ARCHIVE_IMPORT_MAX_BYTES);
    }
    return true;
  }
}

export function tooLarge(max: number): ArchiveException {
  return new ArchiveException(
    ArchiveErrorCode.TOO_LARGE,
    `The archive is larger than this server accepts: at most ${max} bytes (ARCHIVE_IMPORT_MAX_BYTES).`,
    'file',
  );
}
