import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  PageRequest,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import type { SessionBounds } from '../graphql/session-bound.js';
import { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { countTokens } from '../llm/tokenizer.js';
import { EventBus, RevocationEvent, topics } from '../pubsub/event-bus.js';
import { ConversationAccessService, ConversationView } from './conversation-access.service.js';
import { ConversationLimitsService } from './conversation-limits.service.js';
import type { ParticipantRow } from './conversation-participant.repository.js';
import { ConversationErrorCode, ConversationException } from './conversation.exception.js';
import { ConversationEntity } from './conversation.entity.js';
import { ConversationRepository } from './conversation.repository.js';
import { MessageRole } from './message-role.enum.js';
import { MessageEntity } from './message.entity.js';
import { MessageRepository } from './message.repository.js';
import { TurnEvents } from './turn-events.js';
import { asReadBy } from './withheld-reply.js';

export interface AppendTurn {
  role: MessageRole;
  /** Who said it (a user turn), or whom the agent answered (an assistant turn). */
  authorId: string;
  content: string;
  clientMessageId?: string | null;
  metadata?: Record<string, unknown> | null;
  occurredAt?: Date | null;
  /** A notice rather than a reply (see MessageEntity.placeholder). */
  placeholder?: boolean;
  /** An agent's turn made for its participant alone (see MessageEntity.answeredAlone). */
  answeredAlone?: boolean;
  /** Writes that must commit with the turn or not at all (the agent's reply record). */
  inTransaction?: (manager: EntityManager, stored: MessageEntity) => Promise<void>;
}

export interface AppendResult {
  message: MessageEntity;
  /** False when a clientMessageId matched an existing turn and nothing was written. */
  created: boolean;
}

const UNIQUE_VIOLATION = '23505';

/**
 * The immutable conversation log: conversations started by one member, with the members taking
 * part (conversation-access.service.ts decides who reads and writes), turns appended in order.
 */
@Injectable()
export class ConversationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly conversations: ConversationRepository,
    private readonly messages: MessageRepository,
    private readonly legacies: LegaciesService,
    private readonly access: ConversationAccessService,
    private readonly events: TurnEvents,
    private readonly bus: EventBus,
    private readonly limits: ConversationLimitsService,
    private readonly config: AppConfig,
  ) {}

  async start(
    user: UserEntity,
    input: {
      legacyId: string;
      title?: string | null;
      remember?: boolean | null;
      participantIds?: string[] | null;
    },
  ): Promise<ConversationView> {
    await this.legacies.requireMember(user.id, input.legacyId);
    const title = this.limits.title(input.title);
    const others = await this.access.requireMembers(
      input.legacyId,
      (input.participantIds ?? []).filter((id) => id.toLowerCase() !== user.id),
    );
    const created = await this.dataSource.transaction(async (m) => {
      await this.limits.countConversation(m, user);
      const conversation = await this.conversations.create(m, {
        legacyId: input.legacyId,
        userId: user.id,
        title,
      });
      const remember = input.remember ?? user.rememberByDefault;
      // Each other participant's memory starts off: their switch is theirs to turn on.
      await this.access.addAll(m, conversation.id, [user.id, ...others], user.id, (id) =>
        id === user.id ? remember : false,
      );
      return conversation;
    });
    return this.access.participating(user, created.id);
  }

  /** The conversation, for a current participant who is still a member of its legacy. */
  getParticipating(user: UserEntity, id: string): Promise<ConversationView> {
    return this.access.participating(user, id);
  }

  /** The conversation, for a current or former participant (what they may read of it). */
  getReadable(user: UserEntity, id: string): Promise<ConversationView> {
    return this.access.readable(user, id);
  }

  addParticipant(user: UserEntity, conversationId: string, userId: string) {
    return this.access.add(user, conversationId, userId);
  }

  async leave(user: UserEntity, conversationId: string): Promise<ConversationView> {
    const view = await this.access.leave(user, conversationId);
    // Their subscriptions re-check now (and end), not at the next event.
    const event: RevocationEvent = { userId: user.id };
    await this.bus.publishAfterCommit(topics.conversationLeft(conversationId), event, 'leave');
    return view;
  }

  participantsOf(ids: readonly string[]) {
    return this.access.participantsOf(ids);
  }

  /**
   * What a subscription on the conversation re-checks (before each event, and when it is
   * deleted or its subscriber leaves or is removed from the legacy): that they still take part.
   */
  subscriptionBounds(user: UserEntity, conversation: ConversationEntity): SessionBounds {
    return {
      check: () => this.access.participating(user, conversation.id),
      revokedBy: [
        topics.conversationDeleted(conversation.id),
        topics.conversationLeft(conversation.id),
        topics.legacyAccessRevoked(conversation.legacyId),
      ],
    };
  }

  findByIds(ids: readonly string[]): Promise<ConversationEntity[]> {
    return this.conversations.findByIds(ids);
  }

  async list(
    user: UserEntity,
    legacyId: string,
    args: { first?: number; after?: string },
    participantsOf: (ids: string[]) => Promise<(ParticipantRow[] | Error)[]>,
  ): Promise<Connection<ConversationView>> {
    await this.legacies.requireMember(user.id, legacyId);
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [lastActivityAt, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { lastActivityAt, id };
        })()
      : undefined;
    const rows = await this.conversations.pageForParticipant(
      legacyId,
      user.id,
      request.limit + 1,
      after,
    );
    const participants = await participantsOf(rows.map((r) => r.id));
    const views = rows.map((r, i) => {
      const all = participants[i];
      if (all instanceof Error) throw all;
      return { ...r, viewer: all.find((p) => p.userId === user.id)!, together: all.length > 1 };
    });
    return toConnection(views, request, (c) =>
      encodeCursor([c.lastActivityAt.toISOString(), c.id]),
    );
  }

  /** The turns the viewer may read: all of them, or those said before they left. */
  async messagesPage(
    viewerId: string,
    conversationId: string,
    readableUntilTurn: number | null,
    args: { first?: number; after?: string; last?: number; before?: string },
  ): Promise<Connection<MessageEntity>> {
    const request: PageRequest = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const cursorTurn = request.cursor
      ? Number(
          decodeCursor(request.cursor, request.direction === 'forward' ? 'after' : 'before', 1)[0],
        )
      : undefined;
    const rows = await this.messages.page(
      conversationId,
      request.limit + 1,
      request.direction,
      cursorTurn,
      readableUntilTurn,
    );
    return toConnection(
      rows.map((m) => asReadBy(m, viewerId)),
      request,
      (m) => encodeCursor([m.turnIndex]),
    );
  }

  recentMessages(conversationId: string, count: number, beforeTurn?: number) {
    return this.messages.recent(conversationId, count, beforeTurn);
  }

  /** The turn stored with this clientMessageId, if any. */
  findByClientMessageId(conversationId: string, clientMessageId: string) {
    return this.messages.findByClientId(conversationId, clientMessageId);
  }

  findMessagesByIds(ids: readonly string[]): Promise<MessageEntity[]> {
    return this.messages.findByIds(ids);
  }

  setRemember(user: UserEntity, id: string, remember: boolean): Promise<ConversationView> {
    return this.access.setRemember(user, id, remember);
  }

  /**
   * Conversations the user left behind in legacies they are no longer a member of: theirs to
   * find and delete, and nothing more (no turns, nothing derived, nothing of the legacy).
   */
  async listLeftBehind(
    user: UserEntity,
    args: { first?: number; after?: string },
  ): Promise<Connection<ConversationEntity>> {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [lastActivityAt, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { lastActivityAt, id };
        })()
      : undefined;
    const rows = await this.conversations.pageLeftBehind(user.id, request.limit + 1, after);
    return toConnection(rows, request, (c) => encodeCursor([c.lastActivityAt.toISOString(), c.id]));
  }

  /** A member's conversations and turns in a legacy in [from, to) (for period summaries). */
  coverage(userId: string, legacyId: string, from: Date, to: Date) {
    return this.messages.coverage(userId, legacyId, from, to);
  }

  /**
   * Of these conversations, the ones that still exist; a deletion of one waits for `manager`'s
   * transaction to end, so what is written with them cannot outlive them unnoticed.
   */
  lockExisting(manager: EntityManager, ids: readonly string[]): Promise<Set<string>> {
    return this.conversations.lockExisting(manager, ids);
  }

  /**
   * Deletes a conversation the user started, for every participant. Membership is not
   * required: a member who left or was removed still owns what they started.
   */
  async delete(user: UserEntity, id: string): Promise<void> {
    const conversation = await this.conversations.findById(id);
    if (!conversation) throw ConversationException.notFound();
    if (conversation.userId !== user.id) {
      // Another participant knows it exists (NOT_FOUND for anyone else): they leave it instead.
      await this.access.readable(user, id);
      throw new ConversationException(
        ConversationErrorCode.NOT_STARTER,
        'Only the member who started a conversation can delete it; leave it instead.',
      );
    }
    await this.dataSource.transaction(async (m) => {
      await this.conversations.delete(id, m);
      await this.events.runDeleted(conversation, m);
    });
    // Ends subscriptions on it; if lost, they still end at their next event's access check.
    await this.bus.publishAfterCommit(topics.conversationDeleted(id), {}, 'conversation deletion');
  }

  /**
   * Appends one turn. Idempotent by clientMessageId: the same id with the same content returns
   * the stored turn; with different content it is a CONFLICT.
   */
  async append(conversation: ConversationEntity, turn: AppendTurn): Promise<AppendResult> {
    const content = this.limits.content(turn.content, 'content');
    const metadata = this.limits.metadata(turn.metadata, 'metadata');
    const clientMessageId = this.limits.clientMessageId(turn.clientMessageId);
    if (clientMessageId) {
      const existing = await this.messages.findByClientId(conversation.id, clientMessageId);
      if (existing) return { message: this.sameTurn(existing, turn, content), created: false };
    }
    let message: MessageEntity;
    let deliver: () => Promise<void>;
    try {
      ({ message, deliver } = await this.dataSource.transaction(async (m) => {
        // The turn at the next index, and, for a participant's own turn, only while they take
        // part (read under the conversation's lock, which leaveConversation takes too: a turn
        // sent while its writer left is refused, never stored past their boundary).
        const stored = await this.messages.appendNext(
          m,
          {
            conversationId: conversation.id,
            legacyId: conversation.legacyId,
            userId: turn.authorId,
            role: turn.role,
            content,
            tokenCount: countTokens(content),
            metadata,
            clientMessageId,
            occurredAt: turn.occurredAt ?? null,
            placeholder: turn.placeholder ?? false,
            answeredAlone: turn.answeredAlone ?? false,
          },
          turn.role === MessageRole.USER,
        );
        if (!stored) throw ConversationException.notFound();
        await turn.inTransaction?.(m, stored);
        await this.events.runInTransaction(
          { conversation, messages: [stored], imported: false },
          m,
        );
        // Subscribers hear of the turn once it commits.
        const published = await this.bus.publishWith(
          m,
          topics.conversationMessages(conversation.id),
          stored,
        );
        return { message: stored, deliver: published };
      }));
    } catch (err) {
      // A concurrent send with the same clientMessageId won the race.
      if (clientMessageId && isUniqueViolation(err)) {
        const existing = await this.messages.findByClientId(conversation.id, clientMessageId);
        if (existing) return { message: this.sameTurn(existing, turn, content), created: false };
      }
      throw err;
    }
    await deliver();
    await this.events.runAfterCommitLogged({ conversation, messages: [message], imported: false });
    return { message, created: true };
  }

  /** The stored turn a retried send names, if it is the same turn by the same participant. */
  private sameTurn(existing: MessageEntity, turn: AppendTurn, content: string): MessageEntity {
    if (
      existing.content !== content ||
      existing.role !== turn.role ||
      existing.userId !== turn.authorId
    ) {
      throw new ConversationException(
        ConversationErrorCode.CLIENT_MESSAGE_ID_REUSED,
        'This clientMessageId was already used for a different message.',
        'clientMessageId',
      );
    }
    return existing;
  }
}

function isUniqueViolation(err: unknown): boolean {
  return (
    err instanceof QueryFailedError &&
    (err.driverError as { code?: string } | undefined)?.code === UNIQUE_VIOLATION
  );
}
