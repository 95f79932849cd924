import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { UserEntity } from '../identity/user.entity.js';
import { QuotasService, WindowQuota } from '../quotas/quotas.service.js';
import { ConversationErrorCode, ConversationException } from './conversation.exception.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/**
 * What a conversation's writes are held to, wherever they come from (a send, an import, an
 * archive): the sizes of a turn, its metadata, its clientMessageId and a title, the turns of an
 * imported conversation, and the members' daily and hourly counts.
 */
@Injectable()
export class ConversationLimitsService {
  constructor(
    private readonly quotas: QuotasService,
    private readonly config: AppConfig,
  ) {}

  /** CONVERSATIONS_PER_USER_PER_DAY: conversations one member starts or imports in 24 hours. */
  private conversationsPerDay(user: UserEntity): WindowQuota {
    const limit = this.config.env.CONVERSATIONS_PER_USER_PER_DAY;
    return {
      scope: 'conversations.created',
      subjectId: user.id,
      limit,
      windowMs: DAY_MS,
      message: `You can start or import ${limit} conversations a day; try again later.`,
    };
  }

  /** CONVERSATIONS_PER_USER_PER_DAY, counted with the conversation it allows. */
  countConversation(m: EntityManager, user: UserEntity): Promise<void> {
    return this.quotas.consume(m, this.conversationsPerDay(user));
  }

  /**
   * RATE_LIMITED, counting nothing, when fewer than `count` of the member's conversations of
   * the day are left: work that makes several (a legacy archive's import) asks before it begins.
   */
  assertRoomForConversations(m: EntityManager, user: UserEntity, count: number): Promise<void> {
    const limit = this.config.env.CONVERSATIONS_PER_USER_PER_DAY;
    return this.quotas.assertRoom(
      m,
      this.conversationsPerDay(user),
      count,
      `This archive holds ${count} conversations, more than are left of the ${limit} a day you may start or import; try again later.`,
    );
  }

  /** IMPORTS_PER_USER_PER_HOUR, counted with the import it allows. */
  countImport(m: EntityManager, user: UserEntity): Promise<void> {
    const perHour = this.config.env.IMPORTS_PER_USER_PER_HOUR;
    return this.quotas.consume(m, {
      scope: 'conversations.imported',
      subjectId: user.id,
      limit: perHour,
      windowMs: HOUR_MS,
      message: `You can make ${perHour} imports an hour; try again later.`,
    });
  }

  /**
   * IMPORT_MAX_MESSAGES: an imported conversation holds 1 to that many turns. `count` is all of
   * them, those of earlier batches included (a legacy archive's import appends in batches).
   */
  checkImportSize(count: number): void {
    const max = this.config.env.IMPORT_MAX_MESSAGES;
    if (count === 0 || count > max) {
      throw new ConversationException(
        ConversationErrorCode.IMPORT_TOO_LARGE,
        count === 0
          ? 'An imported conversation holds at least one turn.'
          : `An imported conversation holds at most ${max} turns (IMPORT_MAX_MESSAGES); this one has ${count} or more.`,
        'messages',
      );
    }
  }

  content(content: string, field: string): string {
    const max = this.config.env.MESSAGE_MAX_LENGTH;
    if (typeof content !== 'string' || content.trim().length === 0) {
      throw new ConversationException(
        ConversationErrorCode.INVALID_CONTENT,
        'A message cannot be empty.',
        field,
      );
    }
    if (content.length > max) {
      throw new ConversationException(
        ConversationErrorCode.INVALID_CONTENT,
        `A message has at most ${max} characters.`,
        field,
      );
    }
    return content;
  }

  metadata(
    metadata: Record<string, unknown> | null | undefined,
    field: string,
  ): Record<string, unknown> {
    if (metadata == null) return {};
    const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
    if (bytes > this.config.env.METADATA_MAX_BYTES) {
      throw new ConversationException(
        ConversationErrorCode.INVALID_METADATA,
        `Metadata is at most ${this.config.env.METADATA_MAX_BYTES} bytes of JSON.`,
        field,
      );
    }
    return metadata;
  }

  clientMessageId(id: string | null | undefined): string | null {
    if (id == null) return null;
    const trimmed = id.trim();
    if (trimmed.length === 0 || trimmed.length > 200) {
      throw new ConversationException(
        ConversationErrorCode.INVALID_CONTENT,
        'A clientMessageId has 1 to 200 characters.',
        'clientMessageId',
      );
    }
    return trimmed;
  }

  title(title: string | null | undefined): string | null {
    if (title == null) return null;
    const trimmed = title.trim();
    if (trimmed.length > 200) {
      throw new ConversationException(
        ConversationErrorCode.INVALID_TITLE,
        'A title has at most 200 characters.',
        'title',
      );
    }
    return trimmed.length === 0 ? null : trimmed;
  }
}
