import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { ContextModule } from '../context/context.module.js';
import { Module, OnModuleInit } from '@nestjs/common';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { FACT_KIND, FactRepository } from './fact.repository.js';
import { FactsContextProvider } from './facts-context.provider.js';
import { FactHistoryResolver, FactsResolver } from './facts.resolver.js';
import { FactEventsService } from './fact-events.service.js';
import { FactWriterService } from './fact-writer.service.js';
import { FactsService } from './facts.service.js';

/** Facts about legacies: dedupe, supersession, family review, factChanged, the context section. */
@Module({
  imports: [LegaciesModule, ConversationsModule, ContextModule, EmbeddingsModule],
  providers: [
    FactRepository,
    FactEventsService,
    FactWriterService,
    FactsService,
    FactsResolver,
    FactHistoryResolver,
    FactsContextProvider,
  ],
  exports: [FactsService, FactWriterService, FactEventsService, FactRepository],
})
export class FactsModule implements OnModuleInit {
  constructor(
    private readonly embeddings: EmbeddingService,
    private readonly assembler: ContextAssemblerService,
    private readonly contextProvider: FactsContextProvider,
    private readonly tasks: ScheduledTasksService,
    private readonly facts: FactsService,
  ) {}

  onModuleInit(): void {
    // Every status keeps its vector: superseded facts are searchable history, and deleted ones
    // are compared with new facts (so a deleted fact is not extracted again) and may be restored.
    this.embeddings.registerKind({
      kind: FACT_KIND,
      table: 'facts',
      textSql: 'i.content',
      legacyColumn: 'legacy_id',
      userColumn: 'author_id',
    });
    this.assembler.register(this.contextProvider);
    this.tasks.register('facts-purge', '47 * * * *', async () => {
      await this.facts.purgeDeleted();
    });
  }
}
