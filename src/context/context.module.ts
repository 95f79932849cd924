import { Module } from '@nestjs/common';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { ContextAssemblerService } from './context-assembler.service.js';

/**
 * The context assembler and its provider registry. Modules that add a section (facts, memories,
 * search, summaries) import it and register their provider; it knows none of them.
 */
@Module({
  imports: [ConversationsModule, EmbeddingsModule],
  providers: [ContextAssemblerService],
  exports: [ContextAssemblerService],
})
export class ContextModule {}
