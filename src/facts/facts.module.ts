import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { ContextModule } from '../context/context.module.js';
import { Module, OnModuleInit } from '@nestjs/common';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { FACT_KIND, FactRepository } from './fact.repository.js';
import { FactAccessService } from './fact-access.service.js';
import { FactHistoryRepository } from './fact-history.repository.js';
import { FactPurgeService } from './fact-purge.service.js';
import { FactReconcilerService } from './fact-reconciler.service.js';
import { FactSharingService } from './fact-sharing.service.js';
import { FactSourceRepository } from './fact-source.repository.js';
import { FactVectorsService } from './fact-vectors.service.js';
import { FactsContextProvider } from './facts-context.provider.js';
import { FactHistoryResolver, FactsResolver } from './facts.resolver.js';
import { FactEventsService } from './fact-events.service.js';
import { FactWriterService } from './fact-writer.service.js';
import { FactsService } from './facts.service.js';
import { VisibleFactRepository } from './visible-fact.repository.js';

/** Facts about legacies: dedupe, supersession, family review, factChanged, the context section. */
@Module({
  imports: [LegaciesModule, ConversationsModule, ContextModule, EmbeddingsModule],
  providers: [
    FactRepository,
    FactSourceRepository,
    FactHistoryRepository,
    VisibleFactRepository,
    FactAccessService,
    FactEventsService,
    FactVectorsService,
    FactReconcilerService,
    FactSharingService,
    FactWriterService,
    FactsService,
    FactPurgeService,
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
    private readonly purge: FactPurgeService,
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
      await this.purge.purgeDeleted();
    });
  }
}
