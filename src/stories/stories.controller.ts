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
import { DocumentUploadGuard } from './document-upload.guard.js';
import { UploadDocumentFields } from './dto/upload-document.fields.js';
import { StoryErrorCode, StoryException } from './story.exception.js';
import { toStoryModel } from './story.mapper.js';
import { savedFileName } from './story-files.js';

/** What multer hands over for the uploaded file. */
interface MultipartFile {
  buffer: Buffer;
  originalname?: string;
  mimetype?: string;
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
  // Membership and room are checked before multer reads the file; its limits (DOCUMENT_MAX_BYTES,
  // one file) come from MulterModule in the module.
  @UseGuards(DocumentUploadGuard)
  @UseInterceptors(FileInterceptor('file'))
  async uploadDocument(
    @Req() req: AuthenticatedRequest,
    @Param('id', new ParseUUIDPipe()) legacyId: string,
    @UploadedFile() file: MultipartFile | undefined,
    @Body() body: UploadDocumentFields,
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
        title: body.title ?? null,
        visibility: body.visibility ?? null,
        occurredAt: body.occurredAt ?? null,
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
    const name = savedFileName(story.fileName, story.title, story.format);
    res.setHeader('content-type', story.mimeType ?? 'application/octet-stream');
    res.setHeader(
      'content-disposition',
      `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
    );
    res.setHeader('x-content-type-options', 'nosniff');
    res.send(bytes);
  }
}
