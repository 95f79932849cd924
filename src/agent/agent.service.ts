import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { MessageRole } from '../conversations/message-role.enum.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import type { UserEntity } from '../identity/user.entity.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { AgentReplyService } from './agent-reply.service.js';
import { SendMessageInput } from './dto/send-message.input.js';

/** sendMessage: the user's turn into the log, then, unless AGENT_REPLY=off, the agent's. */
@Injectable()
export class AgentService {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly replies: AgentReplyService,
    private readonly limits: RateLimitService,
    private readonly config: AppConfig,
  ) {}

  async send(
    user: UserEntity,
    input: SendMessageInput,
  ): Promise<{ message: MessageEntity; reply: MessageEntity | null }> {
    const conversation = await this.conversations.getParticipating(user, input.conversationId);
    const replying = this.config.env.AGENT_REPLY === 'on';
    // A reply is a model call: over the budget, the turn is refused before anything is stored.
    if (replying) await this.limits.modelCall(user.id);
    const { message } = await this.conversations.append(conversation, {
      role: MessageRole.USER,
      authorId: user.id,
      content: input.content,
      clientMessageId: input.clientMessageId,
    });
    const reply = replying ? await this.replies.replyTo(user, conversation, message) : null;
    return { message, reply };
  }
}
