import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module.js';
import { ContextModule } from '../context/context.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { FactsModule } from '../facts/facts.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { MemoriesModule } from '../memories/memories.module.js';
import { SearchModule } from '../search/search.module.js';
import { AgentReplyService } from './agent-reply.service.js';
import { ReplyListeners } from './reply-listeners.js';
import { AgentResolver, MessageGenerationResolver } from './agent.resolver.js';
import { AgentService } from './agent.service.js';
import { AssistantReplyRepository } from './assistant-reply.repository.js';
import { ChatMemoryService } from './chat-memory.service.js';

/**
 * sendMessage and the agent's reply: context, the streamed model call, the stored turn; memory
 * by chat; recordAssistantMessage for clients that run their own model.
 */
@Module({
  imports: [
    ConversationsModule,
    LegaciesModule,
    ContextModule,
    LlmModule,
    MemoriesModule,
    SearchModule,
    FactsModule,
  ],
  providers: [
    AssistantReplyRepository,
    ChatMemoryService,
    AgentReplyService,
    ReplyListeners,
    AgentService,
    AgentResolver,
    MessageGenerationResolver,
  ],
})
export class AgentModule {}
