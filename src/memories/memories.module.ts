import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { MemoriesResolver, MessageMemoriesResolver } from './memories.resolver.js';
import { MemoriesService } from './memories.service.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryContextProvider } from './memory-context.provider.js';
import { MemoryEvents } from './memory-events.js';
import { MemoryExtraction } from './memory-extraction.service.js';
import { MemoryMaintenance } from './memory-maintenance.service.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryWriter } from './memory-writer.service.js';

/**
 * Memories about the user: consent-gated extraction after each assistant turn, the user's
 * controls (list, search, remember, forget, restore, export, import), purge and retention, and
 * the memory block of the agent's context.
 */
@Module({
  imports: [ConversationsModule, LegaciesModule],
  providers: [
    MemoryClock,
    MemoryRepository,
    MemoryEvents,
    MemoryWriter,
    MemoryExtraction,
    MemoryMaintenance,
    MemoryContextProvider,
    MemoriesService,
    MemoriesResolver,
    MessageMemoriesResolver,
  ],
  exports: [MemoriesService, MemoryClock],
})
export class MemoriesModule {}
