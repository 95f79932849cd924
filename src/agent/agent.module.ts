import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { NoReplyService, ReplyService } from '../conversations/reply.service.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { AgentReplyService } from './agent-reply.service.js';
import { AgentResolver, MessageGenerationResolver } from './agent.resolver.js';
import { AssistantReplyRepository } from './assistant-reply.repository.js';

/**
 * The agent's side of sendMessage. Global because the conversation log depends on the abstract
 * ReplyService while this module depends on the log.
 */
@Global()
@Module({
  imports: [ConversationsModule, LegaciesModule],
  providers: [
    AssistantReplyRepository,
    AgentReplyService,
    NoReplyService,
    {
      provide: ReplyService,
      inject: [AppConfig, AgentReplyService, NoReplyService],
      useFactory: (config: AppConfig, agent: AgentReplyService, none: NoReplyService) =>
        config.env.AGENT_REPLY === 'on' ? agent : none,
    },
    AgentResolver,
    MessageGenerationResolver,
  ],
  exports: [ReplyService, AssistantReplyRepository],
})
export class AgentModule {}
