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

  /** Of these turns, the ones that are error replies (kept out of the model's window). */
  async errorMessageIds(messageIds: readonly string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const rows: { message_id: string }[] = await this.dataSource.query(
      `SELECT message_id FROM assistant_replies WHERE message_id = ANY($1::uuid[]) AND is_error`,
      [messageIds],
    );
    return new Set(rows.map((r) => r.message_id));
  }
}
