import { Module, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ContextModule } from '../context/context.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { TurnEvents } from '../conversations/turn-events.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { LlmModule } from '../llm/llm.module.js';
import { SearchModule } from '../search/search.module.js';
import { SearchService } from '../search/search.service.js';
import { SummariesModule } from '../summaries/summaries.module.js';
import { PeriodSchedulerService } from './period-scheduler.service.js';
import { PeriodSummariesContextProvider } from './period-summaries-context.provider.js';
import { PeriodSummariesResolver } from './period-summaries.resolver.js';
import { PeriodSummariesService } from './period-summaries.service.js';
import {
  PERIOD_JOB,
  PeriodJobPayload,
  PeriodSummaryBuilderService,
} from './period-summary-builder.service.js';
import { PERIOD_KIND, PeriodSummaryRepository } from './period-summary.repository.js';

/**
 * Weekly, monthly and yearly summaries of each member's conversations, in their time zone:
 * the hourly scheduler, the build job, on-demand and backfill, recall and context for
 * questions about a period, and rebuilding after a conversation is deleted.
 */
@Module({
  imports: [
    ConversationsModule,
    LegaciesModule,
    SearchModule,
    SummariesModule,
    ContextModule,
    EmbeddingsModule,
    LlmModule,
  ],
  providers: [
    PeriodSummaryRepository,
    PeriodSummaryBuilderService,
    PeriodSchedulerService,
    PeriodSummariesService,
    PeriodSummariesContextProvider,
    PeriodSummariesResolver,
  ],
  exports: [PeriodSummariesService],
})
export class PeriodsModule implements OnModuleInit {
  constructor(
    private readonly builder: PeriodSummaryBuilderService,
    private readonly scheduler: PeriodSchedulerService,
    private readonly periods: PeriodSummariesService,
    private readonly contextProvider: PeriodSummariesContextProvider,
    private readonly jobs: JobsService,
    private readonly tasks: ScheduledTasksService,
    private readonly turns: TurnEvents,
    private readonly embeddings: EmbeddingService,
    private readonly assembler: ContextAssemblerService,
    private readonly search: SearchService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.assembler.register(this.contextProvider);
    this.search.registerSource(this.contextProvider.asRecallSource());
    this.embeddings.registerKind({
      kind: PERIOD_KIND,
      table: 'period_summaries',
      textSql: 'i.summary',
      whereSql: 'i.deleted_at IS NULL',
      legacyColumn: 'legacy_id',
      userColumn: 'user_id',
    });
    this.jobs.register<PeriodJobPayload>(PERIOD_JOB, (payload) => this.builder.runJob(payload));
    this.tasks.register('period-summaries', this.config.env.PERIOD_SUMMARIES_CRON, async () => {
      await this.scheduler.tick();
    });
    this.turns.onConversationDeleted((conversation, manager) =>
      this.periods.conversationDeleted(manager, conversation.id),
    );
    // Live turns fall in a period that has not ended; imported ones may land in any.
    this.turns.onStoredInTransaction(async (event, manager) => {
      if (!event.imported || !event.span) return;
      await this.periods.turnsImported(
        manager,
        event.conversation.userId,
        event.conversation.legacyId,
        event.span,
      );
    });
  }
}
