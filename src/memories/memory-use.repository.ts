import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MemoryEntity } from './memory.entity.js';
import { returned } from '../database/sql-params.js';
import { columns } from './memory-sql.js';

/** Which memories each reply was given (memory_uses), and the references that counts. */
@Injectable()
export class MemoryUseRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Memories given to the model for these assistant turns, still visible to their owner. */
  usedByMessages(
    userId: string,
    messageIds: readonly string[],
  ): Promise<(MemoryEntity & { messageId: string })[]> {
    if (messageIds.length === 0) return Promise.resolve([]);
    return this.m().query(
      `SELECT u.message_id AS "messageId", ${columns()}
         FROM memory_uses u JOIN memories m ON m.id = u.memory_id
        WHERE u.message_id = ANY($1::uuid[]) AND u.user_id = $2 AND m.user_id = $2
          AND m.status <> 'DELETED'
        ORDER BY u.used_at, m.id`,
      [messageIds, userId],
    );
  }

  /**
   * Records which memories an assistant turn was given and counts one reference for each,
   * once per turn whatever the retries.
   */
  async recordUses(
    messageId: string,
    userId: string,
    memoryIds: readonly string[],
    now: Date,
    manager?: EntityManager,
  ): Promise<string[]> {
    if (memoryIds.length === 0) return [];
    const result: unknown = await this.m(manager).query(
      `WITH ins AS (
         INSERT INTO memory_uses (message_id, memory_id, user_id, used_at)
         SELECT $1, m.id, m.user_id, $4 FROM memories m
          WHERE m.id = ANY($3::uuid[]) AND m.user_id = $2
         ON CONFLICT DO NOTHING RETURNING memory_id)
       UPDATE memories SET reference_count = reference_count + 1,
              last_referenced_at = GREATEST(last_referenced_at, $4::timestamptz)
        WHERE id IN (SELECT memory_id FROM ins)
       RETURNING id`,
      [messageId, userId, memoryIds, now],
    );
    return returned<{ id: string }>(result).map((r) => r.id);
  }

  async replyTotals(userId: string): Promise<{ replies: number; withMemories: number }> {
    const rows: { replies: string; used: string }[] = await this.m().query(
      `SELECT (SELECT count(*) FROM messages WHERE user_id = $1 AND role = 'ASSISTANT') AS replies,
              (SELECT count(DISTINCT message_id) FROM memory_uses WHERE user_id = $1) AS used`,
      [userId],
    );
    return { replies: Number(rows[0].replies), withMemories: Number(rows[0].used) };
  }
}
