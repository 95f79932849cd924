import { Module, OnModuleInit } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { ContextModule } from '../context/context.module.js';
import { AppConfig } from '../config/app-config.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { TurnEvents } from '../conversations/turn-events.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { FactsModule } from '../facts/facts.module.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { SearchModule } from '../search/search.module.js';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ChunkWriterService } from './chunk-writer.service.js';
import { SummariesContextProvider } from './summaries-context.provider.js';
import { ConversationChunkRepository, SUMMARY_KIND } from './conversation-chunk.repository.js';
import { ConversationSummariesResolver, SummariesResolver } from './summaries.resolver.js';
import {
  SET_ASIDE_JOB,
  SUMMARIZE_JOB,
  SetAsidePayload,
  SummariesService,
  SummarizeJobPayload,
} from './summaries.service.js';

/** Rolling summarization of conversations into chunks, with the facts found in them. */
@Module({
  imports: [
    ConversationsModule,
    LegaciesModule,
    FactsModule,
    SearchModule,
    ContextModule,
    EmbeddingsModule,
    LlmModule,
  ],
  providers: [
    ConversationChunkRepository,
    ChunkWriterService,
    SummariesService,
    SummariesContextProvider,
    SummariesResolver,
    ConversationSummariesResolver,
  ],
  exports: [SummariesService, ConversationChunkRepository],
})
export class SummariesModule implements OnModuleInit {
  constructor(
    private readonly summaries: SummariesService,
    private readonly turns: TurnEvents,
    private readonly jobs: JobsService,
    private readonly tasks: ScheduledTasksService,
    private readonly embeddings: EmbeddingService,
    private readonly config: AppConfig,
    private readonly assembler: ContextAssemblerService,
    private readonly contextProvider: SummariesContextProvider,
  ) {}

  onModuleInit(): void {
    this.assembler.register(this.contextProvider);
    this.embeddings.registerKind({
      kind: SUMMARY_KIND,
      table: 'conversation_chunks',
      textSql: 'i.content',
      legacyColumn: 'legacy_id',
      userColumn: 'user_id',
    });
    this.jobs.register<SummarizeJobPayload>(SUMMARIZE_JOB, (payload) =>
      this.summaries.runJob(payload),
    );
    this.jobs.register<SetAsidePayload>(SET_ASIDE_JOB, (payload) =>
      this.summaries.summarizeSetAside(payload),
    );
    // Committed with the turn (or an import): the check cannot be lost between the two.
    this.turns.onStoredInTransaction(async (event, manager) => {
      await this.summaries.enqueue(event.conversation.id, { manager });
    });
    this.turns.onStored(() => this.jobs.nudge());
    this.tasks.register('summaries-sweep', this.config.env.SUMMARIZATION_SWEEP_CRON, async () => {
      await this.summaries.sweep();
    });
  }
}
