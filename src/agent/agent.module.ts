import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { AgentReplyService } from './agent-reply.service.js';
import { AgentResolver, MessageGenerationResolver } from './agent.resolver.js';
import { AgentService } from './agent.service.js';
import { AssistantReplyRepository } from './assistant-reply.repository.js';

/** sendMessage and the agent's reply: context, the streamed model call, the stored turn. */
@Module({
  imports: [ConversationsModule, LegaciesModule],
  providers: [
    AssistantReplyRepository,
    AgentReplyService,
    AgentService,
    AgentResolver,
    MessageGenerationResolver,
  ],
})
export class AgentModule {}
