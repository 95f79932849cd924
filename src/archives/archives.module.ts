import { Module, OnModuleInit } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { AppConfig } from '../config/app-config.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { FactsModule } from '../facts/facts.module.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { MemoriesModule } from '../memories/memories.module.js';
import { PeriodsModule } from '../periods/periods.module.js';
import { QuotasModule } from '../quotas/quotas.module.js';
import { StoriesModule } from '../stories/stories.module.js';
import { ArchiveExportService } from './archive-export.service.js';
import { ArchiveImportService } from './archive-import.service.js';
import { archiveDirs, ArchiveStore } from './archive-store.js';
import { ArchiveUploadGuard } from './archive-upload.guard.js';
import { ArchiveRepository } from './archive.repository.js';
import { ArchiveHttpExceptionFilter, ArchivesController } from './archives.controller.js';
import { ArchivesResolver } from './archives.resolver.js';
import { EXPORT_GAVE_UP, finalReason, IMPORT_GAVE_UP } from './archive-failure.js';
import {
  ARCHIVE_EXPORT_JOB,
  ARCHIVE_IMPORT_JOB,
  ARCHIVE_LANE,
  ArchivesService,
} from './archives.service.js';

/**
 * Legacy archives: a member's export of what they may see of a legacy as a ZIP that needs no
 * Keepsake to read, and the import of one as a new legacy, both as jobs with progress; the
 * download and upload routes; the store the ZIPs wait in, and their expiry.
 */
@Module({
  imports: [
    LegaciesModule,
    FactsModule,
    StoriesModule,
    ConversationsModule,
    MemoriesModule,
    PeriodsModule,
    EmbeddingsModule,
    QuotasModule,
    MulterModule.registerAsync({
      // Written to the scratch directory as it arrives, never held in memory, within the limit.
      useFactory: (config: AppConfig) => ({
        dest: archiveDirs(config).scratch,
        limits: { fileSize: config.env.ARCHIVE_IMPORT_MAX_BYTES, files: 1, fields: 5 },
        defParamCharset: 'utf8',
      }),
      inject: [AppConfig],
    }),
  ],
  controllers: [ArchivesController],
  providers: [
    ArchiveRepository,
    ArchiveStore,
    ArchiveExportService,
    ArchiveImportService,
    ArchivesService,
    ArchivesResolver,
    ArchiveUploadGuard,
    ArchiveHttpExceptionFilter,
  ],
})
export class ArchivesModule implements OnModuleInit {
  constructor(
    private readonly archives: ArchivesService,
    private readonly jobs: JobsService,
    private readonly tasks: ScheduledTasksService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    // A lane of their own: an archive never holds the slots of summaries, extraction or
    // indexing; an import gives way to a waiting archive job every ARCHIVE_IMPORT_SLICE_MS.
    this.jobs.lane(ARCHIVE_LANE, this.config.env.ARCHIVE_JOBS_CONCURRENCY);
    this.jobs.register<{ archiveId: string }>(
      ARCHIVE_EXPORT_JOB,
      (p) => this.archives.runExport(p.archiveId),
      {
        lane: ARCHIVE_LANE,
        onFinalFailure: (p, err) =>
          this.archives.failExport(p.archiveId, finalReason(err, EXPORT_GAVE_UP)),
      },
    );
    this.jobs.register<{ archiveId: string }>(
      ARCHIVE_IMPORT_JOB,
      (p, ctx) => this.archives.runImport(p.archiveId, ctx),
      {
        lane: ARCHIVE_LANE,
        onFinalFailure: (p, err) =>
          this.archives.failImport(p.archiveId, 'IMPORT_FAILED', finalReason(err, IMPORT_GAVE_UP)),
      },
    );
    this.tasks.register('archives-expire', this.config.env.ARCHIVE_CLEANUP_CRON, async () => {
      await this.archives.expire();
    });
  }
}
