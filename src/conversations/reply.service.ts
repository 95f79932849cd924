import { Injectable } from '@nestjs/common';
import { UserEntity } from '../identity/user.entity.js';
import { ConversationEntity } from './conversation.entity.js';
import { MessageEntity } from './message.entity.js';

/** Produces the agent's turn after a user's turn; the agent module provides the real one. */
export abstract class ReplyService {
  abstract replyTo(
    user: UserEntity,
    conversation: ConversationEntity,
    userMessage: MessageEntity,
  ): Promise<MessageEntity | null>;
}

/** Used when no agent is wired in: the client records its own assistant turns. */
@Injectable()
export class NoReplyService extends ReplyService {
  async replyTo(): Promise<MessageEntity | null> {
    return null;
  }
}
