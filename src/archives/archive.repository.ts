import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { empty, raw, run, sql } from '../database/sql.js';
import { ArchiveCounts, ImportCursor, LegacyArchiveEntity } from './archive.entity.js';
import { ArchiveKind, ArchiveStatus } from './archive.enums.js';

const COLUMNS = raw(`a.id, a.kind, a.user_id AS "userId", a.legacy_id AS "legacyId", a.status,
  a.stage, a.done, a.total, a.counts, a.cursor, a.manifest, a.file_name AS "fileName",
  a.size_bytes::text AS "sizeBytes", a.stored_in AS "storedIn",
  a.failure_reason AS "failureReason", a.failure_code AS "failureCode",
  a.expires_at AS "expiresAt", a.created_at AS "createdAt", a.updated_at AS "updatedAt",
  a.finished_at AS "finishedAt"`);

function revive(row: LegacyArchiveEntity): LegacyArchiveEntity {
  return {
    ...row,
    expiresAt: new Date(row.expiresAt),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    finishedAt: row.finishedAt ? new Date(row.finishedAt) : null,
  };
}

export interface ArchiveProgress {
  stage?: string | null;
  done?: number;
  total?: number;
  counts?: ArchiveCounts;
}

/** All SQL of legacy archives: their rows, their bytes in chunks, and an import's item ids. */
@Injectable()
export class ArchiveRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async insert(
    manager: EntityManager,
    row: {
      kind: ArchiveKind;
      userId: string;
      legacyId: string | null;
      status: ArchiveStatus;
      expiresAt: Date;
      fileName?: string | null;
      sizeBytes?: number | null;
      storedIn?: 'directory' | 'database' | null;
      manifest?: Record<string, unknown> | null;
      total?: number;
    },
  ): Promise<LegacyArchiveEntity> {
    const rows = await run<LegacyArchiveEntity>(
      manager,
      sql`INSERT INTO legacy_archives AS a (kind, user_id, legacy_id, status, expires_at, file_name,
                                         size_bytes, stored_in, manifest, total)
         VALUES (${row.kind}, ${row.userId}, ${row.legacyId}, ${row.status}, ${row.expiresAt},
                 ${row.fileName ?? null}, ${row.sizeBytes ?? null}, ${row.storedIn ?? null},
                 ${row.manifest ? JSON.stringify(row.manifest) : null}::jsonb, ${row.total ?? 0})
         RETURNING ${COLUMNS}`,
    );
    return revive(rows[0]);
  }

  async findById(id: string, manager?: EntityManager): Promise<LegacyArchiveEntity | null> {
    const rows = await run<LegacyArchiveEntity>(
      this.m(manager),
      sql`SELECT ${COLUMNS} FROM legacy_archives a WHERE a.id = ${id}`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  async lock(manager: EntityManager, id: string): Promise<LegacyArchiveEntity | null> {
    const rows = await run<LegacyArchiveEntity>(
      manager,
      sql`SELECT ${COLUMNS} FROM legacy_archives a WHERE a.id = ${id} FOR UPDATE`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  /** An export of this legacy the user asked for that is still on its way. */
  async pendingExport(
    manager: EntityManager,
    userId: string,
    legacyId: string,
  ): Promise<LegacyArchiveEntity | null> {
    const rows = await run<LegacyArchiveEntity>(
      manager,
      sql`SELECT ${COLUMNS} FROM legacy_archives a
        WHERE a.user_id = ${userId} AND a.legacy_id = ${legacyId} AND a.kind = 'EXPORT'
          AND a.status IN ('QUEUED', 'RUNNING')
        ORDER BY a.created_at DESC LIMIT 1`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  /** The user's archives, newest first: exports of one legacy, or every one of theirs. */
  async page(
    userId: string,
    filter: { legacyId?: string | null; kind?: ArchiveKind | null },
    limit: number,
    after: { createdAt: string; id: string } | null,
  ): Promise<LegacyArchiveEntity[]> {
    const rows = await run<LegacyArchiveEntity>(
      this.m(),
      sql`SELECT ${COLUMNS} FROM legacy_archives a
        WHERE a.user_id = ${userId}
          ${filter.legacyId ? sql`AND a.legacy_id = ${filter.legacyId}` : empty}
          ${filter.kind ? sql`AND a.kind = ${filter.kind}` : empty}
          ${after ? sql`AND (a.created_at, a.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : empty}
        ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit}`,
    );
    return rows.map(revive);
  }

  async setStatus(
    manager: EntityManager | undefined,
    id: string,
    status: ArchiveStatus,
    changes: {
      stage?: string | null;
      legacyId?: string;
      sizeBytes?: number;
      storedIn?: 'directory' | 'database';
      fileName?: string;
      counts?: ArchiveCounts;
      total?: number;
      failure?: { code: string; reason: string } | null;
      finished?: boolean;
      expiresAt?: Date;
    } = {},
  ): Promise<void> {
    await run(
      this.m(manager),
      sql`UPDATE legacy_archives SET status = ${status},
           stage = CASE WHEN ${changes.stage !== undefined}::boolean THEN ${changes.stage ?? null}::text ELSE stage END,
           legacy_id = coalesce(${changes.legacyId ?? null}::uuid, legacy_id),
           size_bytes = coalesce(${changes.sizeBytes ?? null}::bigint, size_bytes),
           stored_in = coalesce(${changes.storedIn ?? null}::text, stored_in),
           file_name = coalesce(${changes.fileName ?? null}::text, file_name),
           counts = coalesce(${changes.counts ? JSON.stringify(changes.counts) : null}::jsonb, counts),
           total = coalesce(${changes.total ?? null}::int, total),
           failure_code = CASE WHEN ${changes.failure !== undefined}::boolean THEN ${changes.failure?.code ?? null}::text ELSE failure_code END,
           failure_reason = CASE WHEN ${changes.failure !== undefined}::boolean THEN ${changes.failure?.reason ?? null}::text ELSE failure_reason END,
           finished_at = CASE WHEN ${changes.finished === true}::boolean THEN date_trunc('milliseconds', clock_timestamp()) ELSE finished_at END,
           expires_at = coalesce(${changes.expiresAt ?? null}::timestamptz, expires_at),
           updated_at = date_trunc('milliseconds', clock_timestamp())
         WHERE id = ${id}`,
    );
  }

  async setProgress(
    manager: EntityManager | undefined,
    id: string,
    progress: ArchiveProgress,
  ): Promise<void> {
    await run(
      this.m(manager),
      sql`UPDATE legacy_archives SET
           stage = coalesce(${progress.stage ?? null}::text, stage),
           done = coalesce(${progress.done ?? null}::int, done),
           total = coalesce(${progress.total ?? null}::int, total),
           counts = coalesce(${progress.counts ? JSON.stringify(progress.counts) : null}::jsonb, counts),
           updated_at = date_trunc('milliseconds', clock_timestamp())
         WHERE id = ${id}`,
    );
  }

  /** An import's place, written in the transaction that imported up to it. */
  async setCursor(
    manager: EntityManager,
    id: string,
    cursor: ImportCursor,
    done: number,
  ): Promise<void> {
    await run(
      manager,
      sql`UPDATE legacy_archives SET cursor = ${JSON.stringify(cursor)}::jsonb, done = ${done},
           stage = ${cursor.part}, updated_at = date_trunc('milliseconds', clock_timestamp())
         WHERE id = ${id}`,
    );
  }

  /** Archives whose time is up (finished, failed or uploaded and never imported). */
  expired(now: Date, limit: number): Promise<{ id: string }[]> {
    return run(
      this.m(),
      sql`SELECT id FROM legacy_archives
        WHERE status IN ('UPLOADED', 'COMPLETED', 'FAILED') AND expires_at <= ${now}
        ORDER BY expires_at LIMIT ${limit}`,
    );
  }

  // ---- an import's items ---------------------------------------------------------------

  async mapId(
    manager: EntityManager,
    archiveId: string,
    kind: string,
    originalId: string,
    newId: string,
  ): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO legacy_archive_items (archive_id, kind, original_id, new_id)
         VALUES (${archiveId}, ${kind}, ${originalId}, ${newId})`,
    );
  }

  async mappedIds(
    archiveId: string,
    kind: string,
    originalIds: readonly string[],
    manager?: EntityManager,
  ): Promise<Map<string, string>> {
    if (originalIds.length === 0) return new Map();
    const rows = await run<{ originalId: string; newId: string }>(
      this.m(manager),
      sql`SELECT original_id AS "originalId", new_id AS "newId" FROM legacy_archive_items
        WHERE archive_id = ${archiveId} AND kind = ${kind} AND original_id = ANY(${originalIds}::text[])`,
    );
    return new Map(rows.map((r) => [r.originalId, r.newId]));
  }

  // ---- bytes in the database -------------------------------------------------------------

  async deleteChunks(id: string): Promise<void> {
    await run(this.m(), sql`DELETE FROM legacy_archive_chunks WHERE archive_id = ${id}`);
  }

  async writeChunk(id: string, seq: number, content: Buffer): Promise<void> {
    await run(
      this.m(),
      sql`INSERT INTO legacy_archive_chunks (archive_id, seq, content) VALUES (${id}, ${seq}, ${content})`,
    );
  }

  async readChunk(id: string, seq: number): Promise<Buffer | null> {
    const rows = await run<{ content: Buffer }>(
      this.m(),
      sql`SELECT content FROM legacy_archive_chunks WHERE archive_id = ${id} AND seq = ${seq}`,
    );
    return rows[0] ? Buffer.from(rows[0].content) : null;
  }
}
