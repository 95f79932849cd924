import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MemoryEntity } from './memory.entity.js';
import { columns } from './memory-sql.js';
import { run, sql } from '../database/sql.js';

/** Export and import of a user's memories: the rows to export, and what an import links to. */
@Injectable()
export class MemoryTransferRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Everything the user has (active and archived), oldest first. */
  exportRows(userId: string): Promise<MemoryEntity[]> {
    return run(
      this.m(),
      sql`SELECT ${columns()} FROM memories m WHERE m.user_id = ${userId} AND m.status <> 'DELETED'
        ORDER BY m.created_at, m.id`,
    );
  }

  /** Merges an imported copy: its references add up, the latest reference time wins. */
  async mergeImported(
    manager: EntityManager,
    id: string,
    references: number,
    lastReferencedAt: Date | null,
  ): Promise<MemoryEntity> {
    const [row] = await run<MemoryEntity>(
      manager,
      sql`UPDATE memories m SET reference_count = reference_count + ${references},
              last_referenced_at = CASE WHEN ${lastReferencedAt}::timestamptz IS NULL THEN last_referenced_at
                                        ELSE GREATEST(last_referenced_at, ${lastReferencedAt}::timestamptz) END
        WHERE id = ${id} RETURNING ${columns()}`,
    );
    return row;
  }

  /** Of these conversations and turns, the ones the user owns (imports link them back). */
  async ownedSources(
    userId: string,
    conversationIds: readonly string[],
    messageIds: readonly string[],
  ): Promise<{ conversations: Map<string, string>; messages: Map<string, string> }> {
    const conversations: { id: string; legacyId: string }[] = conversationIds.length
      ? await run(
          this.m(),
          sql`SELECT id, legacy_id AS "legacyId" FROM conversations
            WHERE user_id = ${userId} AND id = ANY(${conversationIds}::uuid[])`,
        )
      : [];
    const messages: { id: string; conversationId: string }[] = messageIds.length
      ? await run(
          this.m(),
          sql`SELECT id, conversation_id AS "conversationId" FROM messages
            WHERE user_id = ${userId} AND id = ANY(${messageIds}::uuid[])`,
        )
      : [];
    return {
      conversations: new Map(conversations.map((c) => [c.id, c.legacyId])),
      messages: new Map(messages.map((m) => [m.id, m.conversationId])),
    };
  }

  /** Memories this user already has that an import names: by their id or their source reference. */
  async knownReferences(
    manager: EntityManager,
    userId: string,
    refs: readonly string[],
  ): Promise<Map<string, MemoryEntity>> {
    if (refs.length === 0) return new Map();
    const rows: MemoryEntity[] = await run(
      manager,
      sql`SELECT ${columns()} FROM memories m
        WHERE m.user_id = ${userId} AND m.status <> 'DELETED'
          AND (m.id::text = ANY(${refs}::text[]) OR m.source_reference = ANY(${refs}::text[]))`,
    );
    const out = new Map<string, MemoryEntity>();
    for (const row of rows) {
      out.set(row.id, row);
      if (row.sourceReference) out.set(row.sourceReference, row);
    }
    return out;
  }

  async linkSupersession(
    manager: EntityManager,
    pairs: { id: string; supersededBy: string }[],
  ): Promise<void> {
    if (pairs.length === 0) return;
    await run(
      manager,
      sql`UPDATE memories m SET superseded_by = p.by
         FROM unnest(${pairs.map((p) => p.id)}::uuid[], ${pairs.map((p) => p.supersededBy)}::uuid[]) AS p(id, by) WHERE m.id = p.id`,
    );
  }
}
