import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { AuthenticatedRequest } from '../identity/guards/http-auth.guard.js';
import { LegacyException } from '../legacies/legacy.exception.js';
import { StoriesService } from './stories.service.js';

/**
 * Runs after HttpAuthGuard and before the file is read (guards run before interceptors): a
 * non-member, or an upload the legacy has no room for, is refused before a byte is buffered.
 */
@Injectable()
export class DocumentUploadGuard implements CanActivate {
  constructor(private readonly stories: StoriesService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const legacyId = req.params.id;
    // Not a legacy id: nothing by that name, as for one the caller is not a member of.
    if (typeof legacyId !== 'string' || !isUUID(legacyId)) throw LegacyException.notFound();
    const declared = Number(req.headers['content-length'] ?? 0);
    await this.stories.assertMayUpload(
      req.user,
      legacyId,
      Number.isFinite(declared) ? declared : 0,
    );
    return true;
  }
}
