import { Module, OnModuleInit } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { ContextModule } from '../context/context.module.js';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { TurnEvents } from '../conversations/turn-events.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { MemoriesResolver, MessageMemoriesResolver } from './memories.resolver.js';
import { MemoriesService } from './memories.service.js';
import { MemoryCommandsService } from './memory-commands.service.js';
import { MemoryUsesService } from './memory-uses.service.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryContextProvider } from './memory-context.provider.js';
import { MemoryEvents } from './memory-events.js';
import {
  EXTRACT_JOB,
  ExtractPayload,
  MemoryExtractionService,
} from './memory-extraction.service.js';
import {
  MemoryMaintenanceService,
  PURGE_TASK,
  RETENTION_TASK,
} from './memory-maintenance.service.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryListRepository } from './memory-list.repository.js';
import { MemoryMaintenanceRepository } from './memory-maintenance.repository.js';
import { MEMORY_KIND } from './memory-sql.js';
import { MemoryWriterService } from './memory-writer.service.js';
import { MemoryFenceRepository } from './memory-fence.repository.js';
import { MemoryLedgerRepository } from './memory-ledger.repository.js';
import { MemoryUseRepository } from './memory-use.repository.js';
import { MemoryTransferRepository } from './memory-transfer.repository.js';
import { MemoryTransferService } from './memory-transfer.service.js';

/**
 * Memories about the user: consent-gated extraction after each assistant turn, the user's
 * controls (list, search, remember, forget, restore, export, import), purge and retention, and
 * the memory block of the agent's context.
 */
@Module({
  imports: [ConversationsModule, LegaciesModule, ContextModule, EmbeddingsModule, LlmModule],
  providers: [
    MemoryClock,
    MemoryRepository,
    MemoryListRepository,
    MemoryMaintenanceRepository,
    MemoryLedgerRepository,
    MemoryFenceRepository,
    MemoryUseRepository,
    MemoryTransferRepository,
    MemoryEvents,
    MemoryWriterService,
    MemoryExtractionService,
    MemoryMaintenanceService,
    MemoryContextProvider,
    MemoriesService,
    MemoryTransferService,
    MemoryCommandsService,
    MemoryUsesService,
    MemoriesResolver,
    MessageMemoriesResolver,
  ],
  exports: [
    MemoriesService,
    MemoryCommandsService,
    MemoryUsesService,
    MemoryClock,
    MemoryExtractionService,
  ],
})
export class MemoriesModule implements OnModuleInit {
  constructor(
    private readonly extraction: MemoryExtractionService,
    private readonly maintenance: MemoryMaintenanceService,
    private readonly contextProvider: MemoryContextProvider,
    private readonly assembler: ContextAssemblerService,
    private readonly embeddings: EmbeddingService,
    private readonly jobs: JobsService,
    private readonly tasks: ScheduledTasksService,
    private readonly turns: TurnEvents,
  ) {}

  onModuleInit(): void {
    // Forgotten memories keep their vectors until the purge, so a restore needs no re-embedding.
    this.embeddings.registerKind({
      kind: MEMORY_KIND,
      table: 'memories',
      textSql: 'i.content',
      whereSql: "i.status <> 'DELETED'",
      legacyColumn: 'legacy_id',
      userColumn: 'user_id',
    });
    this.jobs.register<ExtractPayload>(EXTRACT_JOB, async (payload) => {
      await this.extraction.run(payload);
    });
    this.turns.onStoredInTransaction((event, manager) => this.extraction.enqueue(event, manager));
    this.tasks.register(PURGE_TASK, '23 * * * *', async () => {
      await this.maintenance.purge();
    });
    this.tasks.register(RETENTION_TASK, '41 3 * * *', async () => {
      await this.maintenance.retain();
    });
    this.assembler.register(this.contextProvider);
  }
}
