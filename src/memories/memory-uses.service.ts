import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MessageEntity } from '../conversations/message.entity.js';
import type { UserEntity } from '../identity/user.entity.js';
import { MemoryClock } from './memory-clock.js';
import { MemoryStatus } from './memory.enums.js';
import { MemoryErrorCode, MemoryException } from './memory.exception.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryUseRepository } from './memory-use.repository.js';

/**
 * Which memories an assistant turn used, and the reference each one counts: the one path for
 * the agent's own replies (the memory block it was given) and for clients that run their own
 * model and say what it used (recordAssistantMessage).
 */
@Injectable()
export class MemoryUsesService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly uses: MemoryUseRepository,
    private readonly clock: MemoryClock,
  ) {}

  /**
   * Memories a client says it used: each must be the user's own and active. Any other id
   * (unknown, another user's, forgotten or archived) is refused before anything is written,
   * with one message for all of them so that nothing is revealed about other users' ids.
   */
  async requireUsable(user: UserEntity, ids: readonly string[], field: string): Promise<string[]> {
    const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
    if (wanted.length === 0) return [];
    const found = await this.repo.findOwnedMany(user.id, wanted);
    const active = new Set(found.filter((m) => m.status === MemoryStatus.ACTIVE).map((m) => m.id));
    const bad = wanted.find((id) => !active.has(id));
    if (bad !== undefined) {
      throw new MemoryException(
        MemoryErrorCode.MEMORY_NOT_USABLE,
        `${field}: ${bad} is not one of your active memories.`,
        field,
      );
    }
    return wanted;
  }

  /**
   * Records the uses with the assistant turn, in its transaction; once per turn. Only memories
   * of `userId` (by default the turn's conversation owner) are counted.
   */
  record(
    assistantMessage: MessageEntity,
    memoryIds: readonly string[],
    manager: EntityManager,
    userId: string = assistantMessage.userId,
  ): Promise<string[]> {
    return this.uses.recordUses(assistantMessage.id, userId, memoryIds, this.clock.now(), manager);
  }
}
