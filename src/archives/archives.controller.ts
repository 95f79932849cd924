import {
  ArgumentsHost,
  Catch,
  Controller,
  ExceptionFilter,
  Get,
  HttpException,
  Inject,
  Injectable,
  Optional,
  Param,
  ParseUUIDPipe,
  Post,
  Req,
  Res,
  UploadedFile,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { AppConfig } from '../config/app-config.js';
import {
  DATABASE_FAILURES,
  DomainHttpExceptionFilter,
} from '../common/errors/domain-http.filter.js';
import type { DatabaseFailures } from '../common/errors/domain-http.filter.js';
import { HttpAuthGuard } from '../identity/guards/http-auth.guard.js';
import type { AuthenticatedRequest } from '../identity/guards/http-auth.guard.js';
import { ArchiveUploadGuard, tooLarge } from './archive-upload.guard.js';
import { ArchiveException } from './archive.exception.js';
import { toArchiveModel } from './archive.mapper.js';
import { ArchivesService } from './archives.service.js';

/** What multer hands over for a file it wrote to disk. */
interface DiskFile {
  path: string;
  originalname?: string;
  size: number;
}

/**
 * The routes' errors as every HTTP route's (DomainHttpExceptionFilter: a database failure is
 * DISK_FULL, DATABASE_UNAVAILABLE or DATABASE_BUSY with retryAfterSeconds); a body over the limit
 * says which limit.
 */
@Catch()
@Injectable()
export class ArchiveHttpExceptionFilter implements ExceptionFilter {
  private readonly domain: DomainHttpExceptionFilter;

  constructor(
    private readonly config: AppConfig,
    @Optional() @Inject(DATABASE_FAILURES) failures?: DatabaseFailures,
  ) {
    this.domain = new DomainHttpExceptionFilter(failures);
  }

  catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof HttpException && error.getStatus() === 413) {
      this.domain.catch(tooLarge(this.config.env.ARCHIVE_IMPORT_MAX_BYTES), host);
      return;
    }
    this.domain.catch(error, host);
  }
}

/**
 * Archives over plain HTTP, with the same bearer token as GraphQL: uploading one to import
 * (multipart/form-data, field `file`, streamed to disk within ARCHIVE_IMPORT_MAX_BYTES), and
 * downloading a finished export, streamed from the store.
 */
@Controller('archives')
@UseGuards(HttpAuthGuard)
@UseFilters(ArchiveHttpExceptionFilter)
export class ArchivesController {
  constructor(private readonly archives: ArchivesService) {}

  @Post()
  @UseGuards(ArchiveUploadGuard)
  @UseInterceptors(FileInterceptor('file'))
  async upload(@Req() req: AuthenticatedRequest, @UploadedFile() file: DiskFile | undefined) {
    if (!file) {
      throw ArchiveException.invalid(
        'Send the archive as multipart/form-data in a field named "file".',
      );
    }
    return toArchiveModel(await this.archives.upload(req.user, file.path, file.originalname ?? ''));
  }

  @Get(':id/file')
  async download(
    @Req() req: AuthenticatedRequest,
    @Param('id', new ParseUUIDPipe()) id: string,
    @Res() res: Response,
  ): Promise<void> {
    const { archive, stream } = await this.archives.download(req.user, id);
    res.setHeader('content-type', 'application/zip');
    if (archive.sizeBytes) res.setHeader('content-length', archive.sizeBytes);
    res.setHeader(
      'content-disposition',
      `attachment; filename*=UTF-8''${encodeURIComponent(archive.fileName ?? 'keepsake.zip')}`,
    );
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('cache-control', 'private, no-store');
    try {
      await pipeline(stream, res);
    } catch {
      // The client went away, or the store failed mid-way: the response is cut short either way.
      res.destroy();
    }
  }
}
