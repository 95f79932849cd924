import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module.js';
import { ContextModule } from '../context/context.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { AgentReplyService } from './agent-reply.service.js';
import { AgentResolver, MessageGenerationResolver } from './agent.resolver.js';
import { AgentService } from './agent.service.js';
import { AssistantReplyRepository } from './assistant-reply.repository.js';

/** sendMessage and the agent's reply: context, the streamed model call, the stored turn. */
@Module({
  imports: [ConversationsModule, LegaciesModule, ContextModule, LlmModule],
  providers: [
    AssistantReplyRepository,
    AgentReplyService,
    AgentService,
    AgentResolver,
    MessageGenerationResolver,
  ],
})
export class AgentModule {}
