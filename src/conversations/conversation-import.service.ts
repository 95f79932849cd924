import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { countTokens } from '../llm/tokenizer.js';
import { ConversationAccessService } from './conversation-access.service.js';
import { ConversationLimitsService } from './conversation-limits.service.js';
import { ConversationEntity } from './conversation.entity.js';
import { ConversationRepository } from './conversation.repository.js';
import { MessageRole } from './message-role.enum.js';
import { MessageEntity } from './message.entity.js';
import { MessageRepository, NewMessage } from './message.repository.js';
import { TurnEvents } from './turn-events.js';

export interface ImportedTurn {
  role: MessageRole;
  content: string;
  occurredAt?: Date | null;
  metadata?: Record<string, unknown> | null;
}

/**
 * Conversations brought in whole: importConversation's (its turns in one transaction or not at
 * all) and a legacy archive's (inside the archive import's transactions). Imported turns are
 * searched and summarized like any; no memories are taken from them.
 */
@Injectable()
export class ConversationImportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly conversations: ConversationRepository,
    private readonly messages: MessageRepository,
    private readonly legacies: LegaciesService,
    private readonly access: ConversationAccessService,
    private readonly events: TurnEvents,
    private readonly limits: ConversationLimitsService,
  ) {}

  /** A new conversation holding every given turn, written in one transaction or not at all. */
  async import(
    user: UserEntity,
    input: { legacyId: string; title?: string | null; messages: ImportedTurn[] },
  ): Promise<{ conversation: ConversationEntity; count: number }> {
    await this.legacies.requireMember(user.id, input.legacyId);
    this.limits.checkImportSize(input.messages.length);
    const turns = input.messages.map((t, i) => ({
      role: t.role,
      content: this.limits.content(t.content, `messages.${i}.content`),
      metadata: this.limits.metadata(t.metadata, `messages.${i}.metadata`),
      occurredAt: t.occurredAt ?? null,
    }));
    const lastOccurred = turns.reduce<Date | null>(
      (latest, t) => (t.occurredAt && (!latest || t.occurredAt > latest) ? t.occurredAt : latest),
      null,
    );
    const { conversation, stored } = await this.dataSource.transaction(async (m) => {
      await this.limits.countImport(m, user);
      await this.limits.countConversation(m, user);
      const created = await this.conversations.create(m, {
        legacyId: input.legacyId,
        userId: user.id,
        title: this.limits.title(input.title),
        imported: true,
      });
      await this.access.addAll(m, created.id, [user.id], user.id, () => user.rememberByDefault);
      const start = await this.conversations.reserveTurns(m, created.id, turns.length);
      const rows: NewMessage[] = turns.map((t, i) => ({
        conversationId: created.id,
        legacyId: created.legacyId,
        userId: user.id,
        turnIndex: start + i,
        role: t.role,
        content: t.content,
        tokenCount: countTokens(t.content),
        metadata: t.metadata,
        clientMessageId: null,
        occurredAt: t.occurredAt,
      }));
      await this.messages.insertMany(m, rows);
      const times = rows.map((r) => (r.occurredAt ?? new Date()).getTime());
      const span = { from: new Date(Math.min(...times)), to: new Date(Math.max(...times)) };
      const event = { conversation: created, messages: [], imported: true, span };
      await this.events.runInTransaction(event, m);
      return { conversation: created, stored: rows.length };
    });
    if (lastOccurred) conversation.lastActivityAt = lastOccurred;
    await this.events.runAfterCommit({ conversation, messages: [], imported: true });
    return { conversation: (await this.conversations.findById(conversation.id))!, count: stored };
  }

  /**
   * A conversation brought in by a legacy archive's import, inside its transaction: imported
   * (searched and summarized, no memories taken from it), its importer its one participant.
   * Counted against CONVERSATIONS_PER_USER_PER_DAY like any other.
   */
  async createArchived(
    manager: EntityManager,
    user: UserEntity,
    legacyId: string,
    title: string | null,
  ): Promise<ConversationEntity> {
    await this.limits.countConversation(manager, user);
    const created = await this.conversations.create(manager, {
      legacyId,
      userId: user.id,
      title: this.limits.title(title),
      imported: true,
    });
    await this.access.addAll(manager, created.id, [user.id], user.id, () => user.rememberByDefault);
    return created;
  }

  /**
   * Appends an archive's turns to a conversation made by createArchived, inside the import's
   * transaction, in order, as importConversation stores its turns (the same checks, the same
   * in-transaction hooks), up to IMPORT_MAX_MESSAGES turns in all. Returns the event for the
   * after-commit hooks (runArchivedAfterCommit).
   */
  async appendArchived(
    manager: EntityManager,
    conversation: ConversationEntity,
    turns: (ImportedTurn & { placeholder?: boolean })[],
  ): Promise<{ conversation: ConversationEntity; messages: MessageEntity[]; imported: true }> {
    const start = await this.conversations.reserveTurns(manager, conversation.id, turns.length);
    this.limits.checkImportSize(start + turns.length);
    const rows: NewMessage[] = turns.map((t, i) => {
      const content = this.limits.content(t.content, `messages.${i}.content`);
      return {
        conversationId: conversation.id,
        legacyId: conversation.legacyId,
        userId: conversation.userId,
        turnIndex: start + i,
        role: t.role,
        content,
        tokenCount: countTokens(content),
        metadata: this.limits.metadata(t.metadata, `messages.${i}.metadata`),
        clientMessageId: null,
        occurredAt: t.occurredAt ?? null,
        placeholder: t.placeholder ?? false,
      };
    });
    await this.messages.insertMany(manager, rows);
    const times = rows.map((r) => (r.occurredAt ?? new Date()).getTime());
    const span = { from: new Date(Math.min(...times)), to: new Date(Math.max(...times)) };
    const event = { conversation, messages: [], imported: true as const, span };
    await this.events.runInTransaction(event, manager);
    return event;
  }

  /** After an archive's turns committed: what importConversation runs after its own. */
  async runArchivedAfterCommit(event: {
    conversation: ConversationEntity;
    messages: MessageEntity[];
    imported: boolean;
  }): Promise<void> {
    await this.events.runAfterCommitLogged(event);
  }
}
