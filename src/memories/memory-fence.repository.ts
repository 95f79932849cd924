import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { vectorText } from '../embeddings/vector-sql.js';
import { Sql, empty, join, raw, run, sql } from '../database/sql.js';
import { QueryVector, vectorJoin } from './memory-sql.js';

/** A memory about to be stored from a turn, as the fences compare it. */
export interface FencedCandidate {
  normalized: string;
  slot: { key: string; value: string } | null;
  vector: QueryVector | null;
}

/**
 * `memory_fences`: what a member cleared or forgot, against extraction still in flight or yet to
 * run on what they said before. Times are the database's (`now()`), like a turn's `created_at`:
 * a turn stored before a fence was set has a `created_at` before it. Written and read under the
 * user's memory lock (MemoryRepository.lockUser), so a fence and an extraction's save are
 * ordered: either the save ran first (and the clear or forget then removes what it stored), or
 * it sees the fence.
 */
@Injectable()
export class MemoryFenceRepository {
  /** clearAllMemories: nothing from a turn stored before now is stored afterwards. */
  async fenceAll(manager: EntityManager, userId: string): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO memory_fences (user_id) VALUES (${userId})
       ON CONFLICT (user_id) WHERE memory_id IS NULL DO UPDATE SET fenced_at = now()`,
    );
  }

  /** Forgotten memories: nothing restating one of them from a turn stored before now. */
  async fenceMemories(
    manager: EntityManager,
    userId: string,
    memoryIds: readonly string[],
  ): Promise<void> {
    if (memoryIds.length === 0) return;
    await run(
      manager,
      sql`INSERT INTO memory_fences (user_id, memory_id)
       SELECT ${userId}, id FROM unnest(${memoryIds}::uuid[]) AS id
       ON CONFLICT (memory_id) WHERE memory_id IS NOT NULL DO UPDATE SET fenced_at = now()`,
    );
  }

  /** A restored memory is the member's again: restatements of it are welcome. */
  async unfence(manager: EntityManager, memoryId: string): Promise<void> {
    await run(manager, sql`DELETE FROM memory_fences WHERE memory_id = ${memoryId}`);
  }

  /** Whether the member cleared their memories after the turn was stored. */
  async clearedSince(manager: EntityManager, userId: string, said: Date): Promise<boolean> {
    const rows = await run(
      manager,
      sql`SELECT 1 FROM memory_fences
        WHERE user_id = ${userId} AND memory_id IS NULL AND fenced_at >= ${said}`,
    );
    return rows.length > 0;
  }

  /**
   * Whether the candidate restates a memory the member forgot after the turn was stored, by the
   * writer's own tests of a duplicate (the same text, the same slot and value, a vector at least
   * `similar` alike), in any scope of theirs.
   */
  async restatesForgotten(
    manager: EntityManager,
    userId: string,
    said: Date,
    candidate: FencedCandidate,
    similar: number,
  ): Promise<boolean> {
    const tests: Sql[] = [sql`m.normalized = ${candidate.normalized}`];
    if (candidate.slot) {
      tests.push(
        sql`(m.slot_key = ${candidate.slot.key} AND m.slot_value = ${candidate.slot.value})`,
      );
    }
    const q = candidate.vector;
    const near = q ? vectorJoin(q) : null;
    if (near) tests.push(sql`${near.similarity} >= ${similar}`);
    const rows = await run(
      manager,
      sql`${
        q
          ? sql`WITH qv AS MATERIALIZED (SELECT ${vectorText(q.vector)}::vector(${raw(String(q.dimensions))}) AS v) `
          : empty
      }SELECT 1 FROM memory_fences f JOIN memories m ON m.id = f.memory_id
         ${near ? sql`CROSS JOIN qv LEFT JOIN embeddings e ON ${near.on}` : empty}
        WHERE f.user_id = ${userId} AND f.fenced_at >= ${said} AND m.status = 'DELETED'
          AND (${join(tests, ' OR ')})
        LIMIT 1`,
    );
    return rows.length > 0;
  }
}
