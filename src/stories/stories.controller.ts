import {
  Body,
  Controller,
  Get,
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
import { DomainHttpExceptionFilter } from '../common/errors/domain-http.filter.js';
import { HttpAuthGuard } from '../identity/guards/http-auth.guard.js';
import type { AuthenticatedRequest } from '../identity/guards/http-auth.guard.js';
import { StoriesService } from './stories.service.js';
import { StoryVisibility } from './story.enums.js';
import { StoryErrorCode, StoryException } from './story.exception.js';
import { toStoryModel } from './story.mapper.js';

/** What multer hands over for the uploaded file. */
interface MultipartFile {
  buffer: Buffer;
  originalname?: string;
  mimetype?: string;
}

/** The multipart fields that may come with a file. */
interface UploadFields {
  title?: string;
  visibility?: string;
  occurredAt?: string;
}

/**
 * Files over plain HTTP, with the same bearer token as GraphQL: uploading a document
 * (multipart/form-data, field `file`) and downloading a story's original.
 */
@Controller()
@UseGuards(HttpAuthGuard)
@UseFilters(DomainHttpExceptionFilter)
export class StoriesController {
  constructor(private readonly stories: StoriesService) {}

  @Post('legacies/:id/documents')
  // Multer's limits (DOCUMENT_MAX_BYTES, one file) come from MulterModule in the module.
  @UseInterceptors(FileInterceptor('file'))
  async uploadDocument(
    @Req() req: AuthenticatedRequest,
    @Param('id', new ParseUUIDPipe()) legacyId: string,
    @UploadedFile() file: MultipartFile | undefined,
    @Body() body: UploadFields,
  ) {
    if (!file) {
      throw new StoryException(
        StoryErrorCode.UNREADABLE_DOCUMENT,
        'Send the document as multipart/form-data in a field named "file".',
        'file',
      );
    }
    const story = await this.stories.upload(
      req.user,
      legacyId,
      { bytes: file.buffer, fileName: file.originalname ?? '', mimeType: file.mimetype ?? null },
      {
        title: typeof body.title === 'string' ? body.title : null,
        visibility: visibilityOf(body.visibility),
        occurredAt: dateOf(body.occurredAt),
      },
    );
    return toStoryModel(story);
  }

  @Get('stories/:id/file')
  async download(
    @Req() req: AuthenticatedRequest,
    @Param('id', new ParseUUIDPipe()) id: string,
    @Res() res: Response,
  ): Promise<void> {
    const { story, bytes } = await this.stories.file(req.user, id);
    const name = story.fileName ?? `${story.title}.md`;
    res.setHeader('content-type', story.mimeType ?? 'application/octet-stream');
    res.setHeader(
      'content-disposition',
      `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
    );
    res.setHeader('x-content-type-options', 'nosniff');
    res.send(bytes);
  }
}

function visibilityOf(value: unknown): StoryVisibility | null {
  if (value === undefined || value === null || value === '') return null;
  if (value === StoryVisibility.PRIVATE || value === StoryVisibility.SHARED) return value;
  throw new StoryException(
    StoryErrorCode.INVALID_STORY,
    'visibility must be PRIVATE or SHARED.',
    'visibility',
  );
}

function dateOf(value: unknown): Date | null {
  if (value === undefined || value === null || value === '') return null;
  const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) {
    throw new StoryException(
      StoryErrorCode.INVALID_STORY,
      'occurredAt must be an ISO 8601 date.',
      'occurredAt',
    );
  }
  return date;
}
