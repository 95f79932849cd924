import { Module, OnModuleInit } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { AppConfig } from '../config/app-config.js';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ContextModule } from '../context/context.module.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { FactsModule } from '../facts/facts.module.js';
import { LlmModule } from '../llm/llm.module.js';
import { JobsService } from '../jobs/jobs.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { SearchModule } from '../search/search.module.js';
import { SearchService } from '../search/search.service.js';
import { StoriesContextProvider } from './stories-context.provider.js';
import { QuotasModule } from '../quotas/quotas.module.js';
import { DocumentUploadGuard } from './document-upload.guard.js';
import { StoriesController } from './stories.controller.js';
import { StoriesResolver } from './stories.resolver.js';
import { StoriesService } from './stories.service.js';
import { StoryEventsService } from './story-events.service.js';
import { StoryIndexerService } from './story-indexer.service.js';
import { StoryLimitsService } from './story-limits.service.js';
import { STORY_INDEX_JOB } from './story-jobs.js';
import { STORY_KIND, StoryRepository } from './story.repository.js';
import {
  STORY_EXTRACT_JOB,
  StoryExtractPayload,
  StoryFactsService,
} from './story-facts.service.js';

/**
 * Stories written in the app and documents uploaded to a legacy: the API, the upload and
 * download routes, background indexing, their passages in search, recall and the context.
 */
@Module({
  imports: [
    LegaciesModule,
    FactsModule,
    LlmModule,
    SearchModule,
    ContextModule,
    EmbeddingsModule,
    QuotasModule,
    MulterModule.registerAsync({
      // No storage given: multer keeps the file in memory, within these limits.
      useFactory: (config: AppConfig) => ({
        limits: { fileSize: config.env.DOCUMENT_MAX_BYTES, files: 1, fields: 10 },
        // File names in UTF-8 ("Grand-mère.txt"), not Latin-1.
        defParamCharset: 'utf8',
      }),
      inject: [AppConfig],
    }),
  ],
  controllers: [StoriesController],
  providers: [
    StoryRepository,
    StoryFactsService,
    StoryLimitsService,
    StoryEventsService,
    StoriesService,
    StoryIndexerService,
    StoriesContextProvider,
    StoriesResolver,
    DocumentUploadGuard,
  ],
  exports: [StoriesService, StoryEventsService, StoryFactsService],
})
export class StoriesModule implements OnModuleInit {
  constructor(
    private readonly indexer: StoryIndexerService,
    private readonly storyFacts: StoryFactsService,
    private readonly contextProvider: StoriesContextProvider,
    private readonly jobs: JobsService,
    private readonly embeddings: EmbeddingService,
    private readonly assembler: ContextAssemblerService,
    private readonly search: SearchService,
  ) {}

  onModuleInit(): void {
    this.assembler.register(this.contextProvider);
    this.search.registerSource(this.contextProvider.asRecallSource());
    this.embeddings.registerKind({
      kind: STORY_KIND,
      table: 'story_chunks',
      textSql: `coalesce(i.heading || E'\\n', '') || i.content`,
      legacyColumn: 'legacy_id',
      userColumn: 'author_id',
    });
    this.jobs.register<{ storyId: string }>(
      STORY_INDEX_JOB,
      (payload) => this.indexer.index(payload.storyId),
      { onFinalFailure: (payload, err) => this.indexer.indexFailed(payload.storyId, err) },
    );
    this.jobs.register<StoryExtractPayload>(STORY_EXTRACT_JOB, (payload) =>
      this.storyFacts.runJob(payload),
    );
  }
}
