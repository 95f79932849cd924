import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditEntryEntity, AuditOperation } from './audit-entry.entity.js';
import { empty, raw, run, sql } from '../database/sql.js';

const COLUMNS = raw(`id, actor_id AS "actorId", operation, target_user_id AS "targetUserId",
  target_legacy_id AS "targetLegacyId", target_conversation_id AS "targetConversationId",
  details, created_at AS "createdAt"`);

export interface NewAuditEntry {
  actorId: string;
  operation: AuditOperation;
  targetUserId?: string | null;
  targetLegacyId?: string | null;
  targetConversationId?: string | null;
  details?: Record<string, string[]>;
}

@Injectable()
export class AuditRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(entry: NewAuditEntry): Promise<AuditEntryEntity> {
    const rows: AuditEntryEntity[] = await run(
      this.dataSource,
      sql`INSERT INTO audit_log
         (actor_id, operation, target_user_id, target_legacy_id, target_conversation_id, details)
       VALUES (${entry.actorId}, ${entry.operation}, ${entry.targetUserId ?? null},
         ${entry.targetLegacyId ?? null}, ${entry.targetConversationId ?? null},
         ${JSON.stringify(entry.details ?? {})}::jsonb)
       RETURNING ${COLUMNS}`,
    );
    return rows[0];
  }

  /** Newest first; `after` is the (createdAt, id) of the last row of the previous page. */
  page(limit: number, after?: { createdAt: string; id: string }): Promise<AuditEntryEntity[]> {
    const where = after
      ? sql`WHERE (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`
      : empty;
    return run(
      this.dataSource,
      sql`SELECT ${COLUMNS} FROM audit_log ${where}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    );
  }
}
