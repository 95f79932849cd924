import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { MemoryEntity } from './memory.entity.js';
import { MemoryChangeAction } from './memory.enums.js';
import { MemoryChangedEvent, toMemoryModel } from './memory.mapper.js';

/** Publishes memoryChanged to the owner's topic only. */
@Injectable()
export class MemoryEvents {
  constructor(
    private readonly bus: EventBus,
    private readonly config: AppConfig,
  ) {}

  /** One memory changed: the event carries it. */
  async one(action: MemoryChangeAction, memory: MemoryEntity, now: Date): Promise<void> {
    const model = toMemoryModel(memory, this.config.env.MEMORY_UNDO_DAYS);
    await this.publish({
      userId: memory.userId,
      action,
      memoryIds: [memory.id],
      memory: model,
      undoUntil: action === MemoryChangeAction.FORGOTTEN ? model.restorableUntil : null,
      at: now,
    });
  }

  /** Several memories changed at once (bulk forget, archiving, imports): ids only. */
  async many(
    userId: string,
    action: MemoryChangeAction,
    memoryIds: string[],
    now: Date,
    undoUntil: Date | null = null,
  ): Promise<void> {
    if (memoryIds.length === 0) return;
    await this.publish({ userId, action, memoryIds, memory: null, undoUntil, at: now });
  }

  private async publish(event: MemoryChangedEvent): Promise<void> {
    await this.bus.publishAfterCommit(topics.userMemories(event.userId), event, 'memoryChanged');
  }
}
