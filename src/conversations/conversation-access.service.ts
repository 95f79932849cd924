import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { ConversationEntity } from './conversation.entity.js';
import { ConversationErrorCode, ConversationException } from './conversation.exception.js';
import {
  ConversationParticipantRepository,
  ParticipantRow,
} from './conversation-participant.repository.js';
import { ConversationRepository } from './conversation.repository.js';

/** A conversation as one participant may use it. */
export interface ConversationView extends ConversationEntity {
  viewer: ParticipantRow;
  /** Others take or took part in it: what one participant is told, all of them read. */
  together: boolean;
}

/**
 * Who may read a conversation and who may write in it: the one place every path asks. A
 * participant who is a member of the legacy reads it and takes part; one who left reads the
 * turns said while they were in it (below `viewer.leftAtTurn`), nothing after, and nothing
 * derived later. Anyone else gets NOT_FOUND, as for a conversation that does not exist.
 */
@Injectable()
export class ConversationAccessService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly conversations: ConversationRepository,
    private readonly participants: ConversationParticipantRepository,
    private readonly legacies: LegaciesService,
  ) {}

  /** The conversation for a participant, current or former, who is still a member. */
  async readable(user: UserEntity, id: string): Promise<ConversationView> {
    // The conversation, their part in it and their membership of its legacy, in one statement.
    const found = await this.conversations.findForParticipant(id, user.id);
    // Not a member of the legacy (any more): NOT_FOUND, as for a conversation that does not exist.
    if (!found?.member) throw ConversationException.notFound();
    return { ...found.conversation, viewer: found.participant, together: found.participants > 1 };
  }

  /** The conversation for a current participant: sending, replies, switches, live events. */
  async participating(user: UserEntity, id: string): Promise<ConversationView> {
    const view = await this.readable(user, id);
    if (view.viewer.leftAt !== null) throw ConversationException.notFound();
    return view;
  }

  /** Members of the legacy who are not the starter, each once; NOT_A_MEMBER otherwise. */
  async requireMembers(
    legacyId: string,
    userIds: readonly string[],
    field = 'participantIds',
  ): Promise<string[]> {
    // Ids as the database writes them: an upper-case spelling is the same user.
    const unique = [...new Set(userIds.map((id) => id.toLowerCase()))];
    const members = await this.legacies.membersAmong(legacyId, unique);
    const missing = unique.find((id) => !members.has(id));
    if (missing) {
      throw new ConversationException(
        ConversationErrorCode.NOT_A_MEMBER,
        `${missing} is not a member of this legacy: only members can take part.`,
        field,
      );
    }
    return unique;
  }

  /** Adds participants inside the transaction that creates the conversation or invites them. */
  async addAll(
    manager: EntityManager,
    conversationId: string,
    userIds: readonly string[],
    addedBy: string,
    remember: (userId: string) => boolean,
  ): Promise<string[]> {
    const added: string[] = [];
    for (const userId of userIds) {
      if (
        await this.participants.add(manager, {
          conversationId,
          userId,
          remember: remember(userId),
          addedBy,
        })
      )
        added.push(userId);
    }
    return added;
  }

  /** addConversationParticipant: a current participant brings in another member. */
  async add(user: UserEntity, conversationId: string, userId: string): Promise<ConversationView> {
    const view = await this.participating(user, conversationId);
    const [invitee] = await this.requireMembers(view.legacyId, [userId], 'userId');
    const added = await this.dataSource.transaction((m) =>
      // New participants start with memory off: their own switch is theirs to turn on.
      this.addAll(m, conversationId, [invitee], user.id, () => false),
    );
    // The conversation's row is unchanged: only who takes part in it.
    return { ...view, together: view.together || added.length > 0 };
  }

  /**
   * leaveConversation: the participant stops taking part; the turns said so far stay readable
   * to them. The conversation's lock orders this with appends, so the boundary is exact.
   */
  async leave(user: UserEntity, conversationId: string): Promise<ConversationView> {
    const view = await this.participating(user, conversationId);
    if (view.userId === user.id) {
      throw new ConversationException(
        ConversationErrorCode.STARTER_CANNOT_LEAVE,
        'You started this conversation: delete it (deleteConversation) rather than leave it.',
      );
    }
    await this.dataSource.transaction(async (m) => {
      const next = await this.conversations.lockNextTurn(m, conversationId);
      if (next === null) throw ConversationException.notFound();
      await this.participants.leave(m, conversationId, user.id, next);
    });
    return this.readable(user, conversationId);
  }

  async setRemember(user: UserEntity, id: string, remember: boolean): Promise<ConversationView> {
    const view = await this.participating(user, id);
    // Only while they still take part: one who left meanwhile gets NOT_FOUND, as they would now.
    const viewer = await this.participants.setRemember(id, user.id, remember);
    if (!viewer) throw ConversationException.notFound();
    return { ...view, viewer };
  }

  participantsOf(ids: readonly string[]): Promise<ParticipantRow[]> {
    return this.participants.forConversations(ids);
  }
}
