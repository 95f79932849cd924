import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MemoryEntity } from './memory.entity.js';
import { returned } from '../database/sql-params.js';
import { columns } from './memory-sql.js';

/** Export and import of a user's memories: the rows to export, and what an import links to. */
@Injectable()
export class MemoryTransferRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Everything the user has (active and archived), oldest first. */
  exportRows(userId: string): Promise<MemoryEntity[]> {
    return this.m().query(
      `SELECT ${columns()} FROM memories m WHERE m.user_id = $1 AND m.status <> 'DELETED'
        ORDER BY m.created_at, m.id`,
      [userId],
    );
  }

  /** Merges an imported copy: its references add up, the latest reference time wins. */
  async mergeImported(
    manager: EntityManager,
    id: string,
    references: number,
    lastReferencedAt: Date | null,
  ): Promise<MemoryEntity> {
    const result: unknown = await manager.query(
      `UPDATE memories m SET reference_count = reference_count + $2,
              last_referenced_at = CASE WHEN $3::timestamptz IS NULL THEN last_referenced_at
                                        ELSE GREATEST(last_referenced_at, $3::timestamptz) END
        WHERE id = $1 RETURNING ${columns()}`,
      [id, references, lastReferencedAt],
    );
    return returned<MemoryEntity>(result)[0];
  }

  /** Of these conversations and turns, the ones the user owns (imports link them back). */
  async ownedSources(
    userId: string,
    conversationIds: readonly string[],
    messageIds: readonly string[],
  ): Promise<{ conversations: Map<string, string>; messages: Map<string, string> }> {
    const conversations: { id: string; legacyId: string }[] = conversationIds.length
      ? await this.m().query(
          `SELECT id, legacy_id AS "legacyId" FROM conversations
            WHERE user_id = $1 AND id = ANY($2::uuid[])`,
          [userId, conversationIds],
        )
      : [];
    const messages: { id: string; conversationId: string }[] = messageIds.length
      ? await this.m().query(
          `SELECT id, conversation_id AS "conversationId" FROM messages
            WHERE user_id = $1 AND id = ANY($2::uuid[])`,
          [userId, messageIds],
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
    const rows: MemoryEntity[] = await manager.query(
      `SELECT ${columns()} FROM memories m
        WHERE m.user_id = $1 AND m.status <> 'DELETED'
          AND (m.id::text = ANY($2::text[]) OR m.source_reference = ANY($2::text[]))`,
      [userId, refs],
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
    await manager.query(
      `UPDATE memories m SET superseded_by = p.by
         FROM unnest($1::uuid[], $2::uuid[]) AS p(id, by) WHERE m.id = p.id`,
      [pairs.map((p) => p.id), pairs.map((p) => p.supersededBy)],
    );
  }
}
