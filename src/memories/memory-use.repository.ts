import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MemoryEntity } from './memory.entity.js';
import { columns } from './memory-sql.js';
import { run, sql } from '../database/sql.js';

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
    return run(
      this.m(),
      sql`SELECT u.message_id AS "messageId", ${columns()}
         FROM memory_uses u JOIN memories m ON m.id = u.memory_id
        WHERE u.message_id = ANY(${messageIds}::uuid[]) AND u.user_id = ${userId} AND m.user_id = ${userId}
          AND m.status <> 'DELETED'
        ORDER BY u.used_at, m.id`,
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
    const rows = await run<{ id: string }>(
      this.m(manager),
      sql`WITH ins AS (
         INSERT INTO memory_uses (message_id, memory_id, user_id, used_at)
         SELECT ${messageId}, m.id, m.user_id, ${now}::timestamptz FROM memories m
          WHERE m.id = ANY(${memoryIds}::uuid[]) AND m.user_id = ${userId}
         ON CONFLICT DO NOTHING RETURNING memory_id)
       UPDATE memories SET reference_count = reference_count + 1,
              last_referenced_at = GREATEST(last_referenced_at, ${now}::timestamptz)
        WHERE id IN (SELECT memory_id FROM ins)
       RETURNING id`,
    );
    return rows.map((r) => r.id);
  }

  async replyTotals(userId: string): Promise<{ replies: number; withMemories: number }> {
    const rows: { replies: string; used: string }[] = await run(
      this.m(),
      sql`SELECT (SELECT count(*) FROM messages WHERE user_id = ${userId} AND role = 'ASSISTANT') AS replies,
              (SELECT count(DISTINCT message_id) FROM memory_uses WHERE user_id = ${userId}) AS used`,
    );
    return { replies: Number(rows[0].replies), withMemories: Number(rows[0].used) };
  }
}
