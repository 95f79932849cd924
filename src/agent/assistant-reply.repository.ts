import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { AssistantReplyEntity } from './assistant-reply.entity.js';

export type NewAssistantReply = Omit<AssistantReplyEntity, 'createdAt'>;

@Injectable()
export class AssistantReplyRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, reply: NewAssistantReply): Promise<void> {
    await manager.getRepository(AssistantReplyEntity).insert(reply);
  }

  findByMessageIds(messageIds: readonly string[]): Promise<AssistantReplyEntity[]> {
    if (messageIds.length === 0) return Promise.resolve([]);
    return this.dataSource
      .getRepository(AssistantReplyEntity)
      .findBy({ messageId: In([...messageIds]) });
  }
}
