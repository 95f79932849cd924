import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import {
  CommonException,
  DomainException,
  PublicErrorCode,
} from '../common/errors/domain.exception.js';
import { AppConfig } from '../config/app-config.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { MessageRole } from '../conversations/message-role.enum.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import { FactsService } from '../facts/facts.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { MemoryUsesService } from '../memories/memory-uses.service.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { parseRecallId } from '../search/recall-id.js';
import { AgentReplyService } from './agent-reply.service.js';
import { RecordAssistantMessageInput } from './dto/record-assistant-message.input.js';
import { SendMessageInput } from './dto/send-message.input.js';

/**
 * sendMessage: the user's turn into the log, then, unless AGENT_REPLY=off, the agent's.
 * recordAssistantMessage: the answer of a client's own model, with what it used.
 */
@Injectable()
export class AgentService {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly replies: AgentReplyService,
    private readonly limits: RateLimitService,
    private readonly memoryUses: MemoryUsesService,
    private readonly facts: FactsService,
    private readonly config: AppConfig,
  ) {}

  async send(
    user: UserEntity,
    input: SendMessageInput,
    /** The HTTP request that asked, if any: a reply nobody waits for may stop. */
    request?: IncomingMessage,
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
    const reply = replying
      ? await this.replies.replyTo(user, conversation, message, { request })
      : null;
    return { message, reply };
  }

  /**
   * Stores a client's assistant turn. The memories it says it used are checked first (nothing
   * is written if one is not the user's own active memory, or an item is not theirs to see),
   * then recorded with the turn, counting their references as the agent's replies do.
   */
  async record(user: UserEntity, input: RecordAssistantMessageInput): Promise<MessageEntity> {
    const conversation = await this.conversations.getParticipating(user, input.conversationId);
    const turn = {
      role: MessageRole.ASSISTANT,
      // The caller's own model answered the caller: the turn is theirs, as the agent's would be.
      authorId: user.id,
      content: input.content,
      clientMessageId: input.clientMessageId,
      metadata: input.metadata,
      answeredAlone: !conversation.together,
    };
    // A retry returns the stored turn (its uses were recorded with it), even if a memory it
    // used has been forgotten since.
    if (
      input.clientMessageId &&
      (await this.conversations.findByClientMessageId(conversation.id, input.clientMessageId))
    ) {
      return (await this.conversations.append(conversation, turn)).message;
    }
    const fromItems = await this.usedItemMemories(user, input.usedItemIds ?? []);
    const memoryIds = [
      ...(await this.memoryUses.requireUsable(user, input.usedMemoryIds ?? [], 'usedMemoryIds')),
      ...(await this.memoryUses.requireUsable(user, fromItems, 'usedItemIds')),
    ];
    const { message } = await this.conversations.append(conversation, {
      ...turn,
      inTransaction: async (m, stored) => {
        await this.memoryUses.record(stored, [...new Set(memoryIds)], m, user.id);
      },
    });
    return message;
  }

  /** The memories among used items; facts must be visible to the user; nothing else is taken. */
  private async usedItemMemories(user: UserEntity, itemIds: string[]): Promise<string[]> {
    const memories: string[] = [];
    for (const raw of itemIds) {
      const item = parseRecallId(raw);
      if (item?.sourceType === 'MEMORY') {
        memories.push(item.id);
      } else if (item?.sourceType === 'FACT') {
        await this.facts.getVisible(user, item.id).catch((err: unknown) => {
          if (err instanceof DomainException && err.publicCode === PublicErrorCode.NOT_FOUND) {
            throw CommonException.invalid(
              'usedItemIds',
              `usedItemIds: ${raw} is not a fact you may see.`,
            );
          }
          throw err;
        });
      } else {
        throw CommonException.invalid(
          'usedItemIds',
          `usedItemIds: ${raw} is not a MEMORY or FACT item; only those can be recorded as used.`,
        );
      }
    }
    return memories;
  }
}
