import { Global, Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { ContextAssemblerService } from './context-assembler.service.js';

/**
 * The context assembler and its provider registry. Global so that feature modules (facts,
 * memories, recall) can register section providers without importing the agent.
 */
@Global()
@Module({
  imports: [ConversationsModule],
  providers: [ContextAssemblerService],
  exports: [ContextAssemblerService],
})
export class ContextModule {}
