import { AppConfig } from '../config/app-config.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { LlmModule } from '../llm/llm.module.js';
import { ContextModule } from '../context/context.module.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { Module, OnModuleInit } from '@nestjs/common';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { FactsModule } from '../facts/facts.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { MemoriesModule } from '../memories/memories.module.js';
import { HybridSearchService } from './hybrid-search.service.js';
import { MetricsRepository } from './metrics.repository.js';
import { RetrievalMetricsResolver } from './retrieval-metrics.resolver.js';
import { RetrievalMetricsService } from './retrieval-metrics.service.js';
import { SearchContextService } from './search-context.service.js';
import { TurnsContextProvider } from './turns-context.provider.js';
import { SearchRepository } from './search.repository.js';
import { SearchStatsRepository } from './search-stats.repository.js';
import { CandidateRepository } from './candidate.repository.js';
import { SearchResolver } from './search.resolver.js';
import { QueryRewriterService } from './query-rewriter.service.js';
import { SearchService } from './search.service.js';
import {
  BACKFILL_JOB,
  INDEX_JOB,
  TOLD_JOB,
  KINDS_JOB,
  SEGMENT_KIND,
  SegmentIndexerService,
} from './segment-indexer.service.js';
import { SEGMENT_EMBED_TEXT_SQL } from './segment.repository.js';
import { TurnEvents } from '../conversations/turn-events.js';
import { JobsService } from '../jobs/jobs.service.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { SegmentRepository } from './segment.repository.js';

/**
 * Search over everything Keepsake holds: turn segments (indexed by a job from the log),
 * summaries, facts and memories, run once per context assembly (SearchContextService); the turns
 * section of the agent's context; recall with forgetting; retrieval metrics.
 */
@Module({
  imports: [
    ConversationsModule,
    LegaciesModule,
    FactsModule,
    MemoriesModule,
    ContextModule,
    EmbeddingsModule,
    LlmModule,
  ],
  providers: [
    SegmentRepository,
    SegmentIndexerService,
    SearchRepository,
    SearchStatsRepository,
    CandidateRepository,
    HybridSearchService,
    SearchContextService,
    TurnsContextProvider,
    MetricsRepository,
    RetrievalMetricsService,
    SearchService,
    QueryRewriterService,
    SearchResolver,
    RetrievalMetricsResolver,
  ],
  exports: [HybridSearchService, SearchContextService, SegmentIndexerService, SearchService],
})
export class SearchModule implements OnModuleInit {
  constructor(
    private readonly assembler: ContextAssemblerService,
    private readonly turns: TurnsContextProvider,
    private readonly metrics: RetrievalMetricsService,
    private readonly metricsRows: MetricsRepository,
    private readonly tasks: ScheduledTasksService,
    private readonly config: AppConfig,
    private readonly indexer: SegmentIndexerService,
    private readonly embeddings: EmbeddingService,
    private readonly jobs: JobsService,
    private readonly turnEvents: TurnEvents,
  ) {}

  onModuleInit(): void {
    this.embeddings.registerKind({
      kind: SEGMENT_KIND,
      table: 'message_segments',
      textSql: SEGMENT_EMBED_TEXT_SQL,
      legacyColumn: 'legacy_id',
      userColumn: 'user_id',
    });
    this.jobs.register<{ conversationId: string }>(INDEX_JOB, (p) => this.indexer.indexJob(p));
    this.jobs.register(BACKFILL_JOB, () => this.indexer.backfill());
    this.jobs.register(TOLD_JOB, async () => {
      await this.indexer.readToldPeriods();
    });
    this.jobs.register(KINDS_JOB, async () => {
      await this.indexer.readKinds();
    });
    // Imports fire once with no messages: the job indexes by conversation either way.
    this.turnEvents.onStoredInTransaction((event, manager) =>
      this.indexer.enqueueIndexing(event.conversation.id, manager),
    );
    // The job was enqueued inside the turn's transaction: wake the worker now it is committed.
    this.turnEvents.onStored(() => this.jobs.nudge());
    this.assembler.register(this.turns);
    this.assembler.observe(this.metrics);
    this.tasks.register('metrics-prune', '11 4 * * *', async () => {
      const days = this.config.env.SEARCH_METRICS_RETENTION_DAYS;
      await this.metricsRows.deleteBefore(new Date(Date.now() - days * 86_400_000));
    });
  }
}
