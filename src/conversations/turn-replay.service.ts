import { Injectable } from '@nestjs/common';
import { CommonException } from '../common/errors/domain.exception.js';
import { resumeAfter } from '../graphql/resumable-stream.js';
import { ConversationRepository } from './conversation.repository.js';
import { MessageEntity } from './message.entity.js';
import { MessageRepository } from './message.repository.js';

/** Turns read from the log per statement while a subscription catches up. */
const REPLAY_PAGE = 100;

/**
 * messageAdded(afterTurnIndex): the conversation's turns after an index, read from the log (on
 * the primary: a replica behind would leave a gap), then its live turns (resumable-stream.ts).
 * The subscription's access rule is applied by its caller to replayed and live turns alike.
 */
@Injectable()
export class TurnReplayService {
  constructor(
    private readonly conversations: ConversationRepository,
    private readonly messages: MessageRepository,
  ) {}

  /** Throws BAD_USER_INPUT for an index below -1 (-1: from the first turn). */
  check(afterTurnIndex: number): void {
    if (afterTurnIndex < -1) {
      throw CommonException.invalid(
        'afterTurnIndex',
        'afterTurnIndex is the last turn index you hold, or -1 for none.',
      );
    }
  }

  resume(
    live: AsyncIterableIterator<MessageEntity>,
    conversationId: string,
    afterTurnIndex: number,
  ): AsyncIterableIterator<MessageEntity> {
    return resumeAfter(live, {
      start: async () => {
        const conversation = await this.conversations.findById(conversationId);
        return Math.min(afterTurnIndex, (conversation?.nextTurnIndex ?? 0) - 1);
      },
      after: (index) => this.messages.page(conversationId, REPLAY_PAGE, 'forward', index),
      pageSize: REPLAY_PAGE,
      indexOf: (message) => message.turnIndex,
    });
  }
}
