import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { CommonErrorCode, CommonException } from '../common/errors/domain.exception.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { UserEntity } from '../identity/user.entity.js';
import { AuditEntryEntity, AuditOperation } from './audit-entry.entity.js';
import { AuditRepository } from './audit.repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Payload keys of jobs that name whose data a job touches. */
const TARGET_KEYS: Record<string, string> = {
  userId: 'userIds',
  legacyId: 'legacyIds',
  conversationId: 'conversationIds',
};

/**
 * The audit log: what platform administrators did with other users' data. Each write is
 * awaited in the request it records, before its answer leaves: if it fails, so does the
 * request.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly entries: AuditRepository,
    private readonly conversations: ConversationsService,
    private readonly config: AppConfig,
  ) {}

  /** A platform admin used `operation` on a conversation: recorded unless it is their own. */
  async conversationAccessed(
    actor: UserEntity,
    operation: AuditOperation,
    conversationId: string,
  ): Promise<void> {
    if (!actor.isPlatformAdmin) return;
    const [conversation] = await this.conversations.findByIds([conversationId]);
    if (!conversation || conversation.userId === actor.id) return;
    await this.entries.insert({
      actorId: actor.id,
      operation,
      targetUserId: conversation.userId,
      targetLegacyId: conversation.legacyId,
      targetConversationId: conversation.id,
    });
  }

  /**
   * A platform admin saw or acted on jobs, which belong to every user: recorded with the
   * jobs' ids and the user, legacy and conversation ids their payloads name.
   */
  async jobsAccessed(
    actor: UserEntity,
    operation: AuditOperation,
    jobs: { id: string; payload: Record<string, unknown> }[],
  ): Promise<void> {
    const details: Record<string, string[]> = { jobIds: jobs.map((j) => j.id) };
    for (const job of jobs) {
      for (const [key, list] of Object.entries(TARGET_KEYS)) {
        const value = job.payload?.[key];
        if (typeof value !== 'string' || !UUID.test(value)) continue;
        details[list] ??= [];
        if (!details[list].includes(value)) details[list].push(value);
      }
    }
    await this.entries.insert({ actorId: actor.id, operation, details });
  }

  async list(args: { first?: number; after?: string }): Promise<Connection<AuditEntryEntity>> {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor ? decodeAfter(request.cursor) : undefined;
    const rows = await this.entries.page(request.limit + 1, after);
    return toConnection(rows, request, (e) => encodeCursor([e.createdAt.toISOString(), e.id]));
  }
}

function decodeAfter(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id] = decodeCursor(cursor, 'after', 2);
  if (
    typeof createdAt !== 'string' ||
    Number.isNaN(Date.parse(createdAt)) ||
    typeof id !== 'string' ||
    !UUID.test(id)
  ) {
    throw new CommonException(CommonErrorCode.INVALID_CURSOR, 'The cursor is not valid.', 'after');
  }
  return { createdAt, id };
}
