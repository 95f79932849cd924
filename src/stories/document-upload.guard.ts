import {
  CanActivate,
  ExecutionContext,
  Injectable,
  PayloadTooLargeException,
} from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppConfig } from '../config/app-config.js';
import type { AuthenticatedRequest } from '../identity/guards/http-auth.guard.js';
import { LegacyException } from '../legacies/legacy.exception.js';
import { StoriesService } from './stories.service.js';
import { StorageGuard } from '../database/storage-guard.service.js';

/** What a multipart body may hold besides the file: boundaries, part headers, the form fields. */
export const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;

/**
 * Runs after HttpAuthGuard and before the file is read (guards run before interceptors): a
 * non-member, or a request that declares more than one file may weigh, is refused before a byte
 * is buffered. The member's room is checked when the file is stored, never against a declared
 * size: an answer to a size that was only declared would be free to ask again and again.
 */
@Injectable()
export class DocumentUploadGuard implements CanActivate {
  constructor(
    private readonly stories: StoriesService,
    private readonly config: AppConfig,
    private readonly storage: StorageGuard,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const legacyId = req.params.id;
    // Not a legacy id: nothing by that name, as for one the caller is not a member of.
    if (typeof legacyId !== 'string' || !isUUID(legacyId)) throw LegacyException.notFound();
    // On a full disk the file is refused before it is read, as every other write is.
    const refused = this.storage.writesRefused();
    if (refused) throw refused;
    await this.stories.assertMayUpload(req.user, legacyId);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.config.env.DOCUMENT_MAX_BYTES + MULTIPART_ALLOWANCE_BYTES) {
      // Answered as multer answers a file over DOCUMENT_MAX_BYTES (413, TOO_LARGE).
      throw new PayloadTooLargeException();
    }
    return true;
  }
}
