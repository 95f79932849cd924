import { DatabaseReads } from '../database/database-reads.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { isMemberSql } from '../legacies/membership-sql.js';
import type { StoryChunk } from './story-chunker.js';
import { StoryEntity, StoryPage } from './story.entity.js';
import { StoryFormat, StoryKind, StoryStatus, StoryVisibility } from './story.enums.js';
import { storyVisibleSql } from './story-visibility.js';
import { empty, join, raw, run, sql } from '../database/sql.js';

export const STORY_KIND = 'story';
/** Passages written by one statement. */
const INSERT_BATCH = 50;

export interface NewStory {
  legacyId: string;
  authorId: string;
  title: string;
  kind: StoryKind;
  format: StoryFormat;
  visibility: StoryVisibility;
  pages: StoryPage[];
  sizeBytes: number;
  fileName: string | null;
  mimeType: string | null;
  occurredAt: Date | null;
}

export interface StoryListFilter {
  kind?: StoryKind | null;
  visibility?: StoryVisibility | null;
  status?: StoryStatus | null;
  authorId?: string | null;
  /** Words of the title or the text. */
  search?: string | null;
}

const COLUMNS = raw(`s.id, s.legacy_id AS "legacyId", s.author_id AS "authorId", s.title, s.kind,
  s.format, s.visibility, s.status, s.failure_reason AS "failureReason",
  s.page_count AS "pageCount", s.size_bytes AS "sizeBytes", s.file_name AS "fileName",
  s.mime_type AS "mimeType", s.occurred_at AS "occurredAt", s.total_chunks AS "totalChunks",
  s.indexed_chunks AS "indexedChunks", s.created_at AS "createdAt", s.updated_at AS "updatedAt"`);

function revive(row: StoryEntity): StoryEntity {
  return {
    ...row,
    occurredAt: row.occurredAt ? new Date(row.occurredAt) : null,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
}

/** All SQL of stories, their files and their chunks. */
@Injectable()
export class StoryRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reads: DatabaseReads,
  ) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async insert(manager: EntityManager, story: NewStory): Promise<StoryEntity> {
    const rows: StoryEntity[] = await run(
      manager,
      sql`INSERT INTO stories AS s (legacy_id, author_id, title, kind, format, visibility, pages,
                                 page_count, size_bytes, file_name, mime_type, occurred_at)
       VALUES (${story.legacyId}, ${story.authorId}, ${story.title}, ${story.kind}, ${story.format},
         ${story.visibility}, ${JSON.stringify(story.pages)}, ${story.pages.length},
         ${story.sizeBytes}, ${story.fileName}, ${story.mimeType}, ${story.occurredAt})
       RETURNING ${COLUMNS}`,
    );
    return revive(rows[0]);
  }

  /**
   * Bytes of one author's stories and documents in a legacy (their original files), leaving out
   * `exceptId` (a story whose file is being replaced).
   */
  async storageUsed(
    manager: EntityManager,
    legacyId: string,
    authorId: string,
    exceptId: string | null = null,
  ): Promise<number> {
    const rows: { bytes: string }[] = await run(
      manager,
      sql`SELECT coalesce(sum(size_bytes), 0)::bigint AS bytes FROM stories
        WHERE legacy_id = ${legacyId} AND author_id = ${authorId} AND (${exceptId}::uuid IS NULL OR id <> ${exceptId}::uuid)`,
    );
    return Number(rows[0]?.bytes ?? 0);
  }

  async saveFile(manager: EntityManager, storyId: string, content: Uint8Array): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO story_files (story_id, content) VALUES (${storyId}, ${Buffer.from(content)})
       ON CONFLICT (story_id) DO UPDATE SET content = EXCLUDED.content`,
    );
  }

  async file(storyId: string): Promise<Buffer | null> {
    const rows: { content: Buffer }[] = await run(
      this.m(),
      sql`SELECT content FROM story_files WHERE story_id = ${storyId}`,
    );
    return rows[0] ? Buffer.from(rows[0].content) : null;
  }

  /** Its text, page by page, and a digest of it (to tell whether it changed since). */
  async text(
    id: string,
    manager?: EntityManager,
  ): Promise<{ pages: StoryPage[]; digest: string } | null> {
    const rows: { pages: StoryPage[]; digest: string }[] = await run(
      this.m(manager),
      sql`SELECT pages, md5(pages::text) AS digest FROM stories WHERE id = ${id}`,
    );
    return rows[0] ?? null;
  }

  async textDigest(manager: EntityManager, id: string): Promise<string | null> {
    const rows: { digest: string }[] = await run(
      manager,
      sql`SELECT md5(pages::text) AS digest FROM stories WHERE id = ${id}`,
    );
    return rows[0]?.digest ?? null;
  }

  /** `count` pages from page `from`, without sending the rest of the text. */
  pageRange(id: string, from: number, count: number): Promise<StoryPage[]> {
    return run(
      this.m(),
      sql`SELECT (e.page->>'number')::int AS number, e.page->>'text' AS text
         FROM stories s, jsonb_array_elements(s.pages) WITH ORDINALITY AS e(page, i)
        WHERE s.id = ${id} AND e.i >= ${from}
        ORDER BY e.i LIMIT ${count}`,
    );
  }

  async findById(id: string, manager?: EntityManager): Promise<StoryEntity | null> {
    const rows: StoryEntity[] = await run(
      this.m(manager),
      sql`SELECT ${COLUMNS} FROM stories s WHERE s.id = ${id}`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  /** Locks the story's row for a change (visibility, edit, delete, indexing progress). */
  async lock(manager: EntityManager, id: string): Promise<StoryEntity | null> {
    const rows: StoryEntity[] = await run(
      manager,
      sql`SELECT ${COLUMNS} FROM stories s WHERE s.id = ${id} FOR UPDATE`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  /** A page of the legacy's stories the viewer may see, newest first. */
  async page(
    viewerId: string,
    legacyId: string,
    filter: StoryListFilter,
    limit: number,
    after: { createdAt: string; id: string } | null,
  ): Promise<StoryEntity[]> {
    const where = [sql`s.legacy_id = ${legacyId}`, storyVisibleSql('s', viewerId)];
    if (filter.kind) where.push(sql`s.kind = ${filter.kind}`);
    if (filter.visibility) where.push(sql`s.visibility = ${filter.visibility}`);
    if (filter.status) where.push(sql`s.status = ${filter.status}`);
    if (filter.authorId) where.push(sql`s.author_id = ${filter.authorId}`);
    if (filter.search) {
      const q = filter.search;
      where.push(
        // One full-text index scan for the legacy's passages, not one per story listed.
        sql`(s.title ILIKE '%' || ${q} || '%' OR s.id IN (
           SELECT c.story_id FROM story_chunks c WHERE c.legacy_id = ${legacyId}
              AND c.search_tsv @@ websearch_to_tsquery('simple', ${q})))`,
      );
    }
    if (after) {
      where.push(sql`(s.created_at, s.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
    }
    const rows = await run<StoryEntity>(
      await this.reads.source(),
      sql`SELECT ${COLUMNS} FROM stories s WHERE ${join(where, ' AND ')}
        ORDER BY s.created_at DESC, s.id DESC LIMIT ${limit}`,
    );
    return rows.map(revive);
  }

  /** The author's stories in legacies they are no longer a member of, newest first. */
  async pageLeftBehind(
    authorId: string,
    limit: number,
    after: { createdAt: string; id: string } | null,
  ): Promise<StoryEntity[]> {
    const cursor = after
      ? sql`AND (s.created_at, s.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`
      : empty;
    const rows = await run<StoryEntity>(
      await this.reads.source(),
      sql`SELECT ${COLUMNS} FROM stories s
        WHERE s.author_id = ${authorId} AND NOT ${isMemberSql(raw('s.legacy_id'), sql`${authorId}`)} ${cursor}
        ORDER BY s.created_at DESC, s.id DESC LIMIT ${limit}`,
    );
    return rows.map(revive);
  }

  async update(
    manager: EntityManager,
    id: string,
    changes: { title?: string; pages?: StoryPage[]; occurredAt?: Date | null; sizeBytes?: number },
  ): Promise<void> {
    const sets = [sql`updated_at = date_trunc('milliseconds', clock_timestamp())`];
    if (changes.title !== undefined) sets.push(sql`title = ${changes.title}`);
    if (changes.occurredAt !== undefined) sets.push(sql`occurred_at = ${changes.occurredAt}`);
    if (changes.sizeBytes !== undefined) sets.push(sql`size_bytes = ${changes.sizeBytes}`);
    if (changes.pages !== undefined) {
      sets.push(sql`pages = ${JSON.stringify(changes.pages)}`);
      sets.push(sql`page_count = ${changes.pages.length}`);
      sets.push(sql`status = 'PROCESSING'`, sql`failure_reason = NULL`);
    }
    await run(manager, sql`UPDATE stories SET ${join(sets, ', ')} WHERE id = ${id}`);
  }

  async setVisibility(
    manager: EntityManager,
    id: string,
    visibility: StoryVisibility,
  ): Promise<void> {
    await run(
      manager,
      sql`UPDATE stories SET visibility = ${visibility}, updated_at = date_trunc('milliseconds', clock_timestamp())
        WHERE id = ${id}`,
    );
  }

  /** Deletes the story, its file and its chunks (their vectors go by trigger). */
  async delete(manager: EntityManager, id: string): Promise<void> {
    await run(manager, sql`DELETE FROM stories WHERE id = ${id}`);
  }

  // ---- chunks and indexing ---------------------------------------------------------------

  /** Replaces the story's chunks (a new text): their vectors go, the count starts again. */
  async replaceChunks(
    manager: EntityManager,
    story: Pick<StoryEntity, 'id' | 'legacyId' | 'authorId'>,
    chunks: StoryChunk[],
  ): Promise<void> {
    await run(manager, sql`DELETE FROM story_chunks WHERE story_id = ${story.id}`);
    // In batches, yielding between them: the embedded database runs statements on this thread,
    // and one statement for a long document's passages (their full-text entries, two indexes)
    // held the event loop for most of a second.
    for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
      const batch = chunks.slice(i, i + INSERT_BATCH);
      await run(
        manager,
        sql`INSERT INTO story_chunks (story_id, legacy_id, author_id, ordinal, page, char_start,
                                   char_end, heading, content, token_count)
         SELECT ${story.id}, ${story.legacyId},
           ${story.authorId}, t.ordinal, t.page, t.cs, t.ce, t.heading, t.content, t.tokens
           FROM unnest(${batch.map((c) => c.ordinal)}::int[], ${batch.map((c) => c.page)}::int[], ${batch.map((c) => c.charStart)}::int[], ${batch.map((c) => c.charEnd)}::int[], ${batch.map((c) => c.heading)}::text[], ${batch.map((c) => c.text)}::text[], ${batch.map((c) => c.tokens)}::int[])
             AS t(ordinal, page, cs, ce, heading, content, tokens)`,
      );
      await yieldToLoop();
    }
    await run(
      manager,
      sql`UPDATE stories SET total_chunks = ${chunks.length}, indexed_chunks = 0 WHERE id = ${story.id}`,
    );
  }

  /** Of these passages, the ones that still exist (a new text replaces them). */
  async existingChunkIds(manager: EntityManager, ids: string[]): Promise<string[]> {
    const rows: { id: string }[] = await run(
      manager,
      sql`SELECT id FROM story_chunks WHERE id = ANY(${ids}::uuid[])`,
    );
    return rows.map((r) => r.id);
  }

  async chunkCount(storyId: string): Promise<number> {
    const rows: { n: number }[] = await run(
      this.m(),
      sql`SELECT count(*)::int AS n FROM story_chunks WHERE story_id = ${storyId}`,
    );
    return rows[0]?.n ?? 0;
  }

  /** Chunks after `afterOrdinal` that have no vector of `model` yet, in order. */
  chunksWithoutVector(
    storyId: string,
    model: string,
    limit: number,
    afterOrdinal = -1,
  ): Promise<{ id: string; ordinal: number; legacyId: string; authorId: string; text: string }[]> {
    return run(
      this.m(),
      sql`SELECT c.id, c.ordinal, c.legacy_id AS "legacyId", c.author_id AS "authorId",
              coalesce(c.heading || E'\\n', '') || c.content AS text
         FROM story_chunks c
        WHERE c.story_id = ${storyId} AND c.ordinal > ${afterOrdinal}
          AND NOT EXISTS (SELECT 1 FROM embeddings e
                           WHERE e.kind = '${raw(STORY_KIND)}' AND e.item_id = c.id AND e.model = ${model})
        ORDER BY c.ordinal LIMIT ${limit}`,
    );
  }

  /** Progress after a batch, without counting again (recordProgress counts at the end). */
  async addProgress(manager: EntityManager, storyId: string, indexed: number): Promise<void> {
    await run(
      manager,
      sql`UPDATE stories SET indexed_chunks = LEAST(total_chunks, indexed_chunks + ${indexed}) WHERE id = ${storyId}`,
    );
  }

  /** Counts the chunks with a vector of `model`; READY when all have one. */
  async recordProgress(storyId: string, model: string): Promise<StoryEntity | null> {
    const rows = await run<StoryEntity>(
      this.m(),
      sql`UPDATE stories s SET
           indexed_chunks = (SELECT count(*) FROM story_chunks c
                              WHERE c.story_id = s.id AND EXISTS (
                                SELECT 1 FROM embeddings e WHERE e.kind = '${raw(STORY_KIND)}'
                                   AND e.item_id = c.id AND e.model = ${model})),
           status = CASE WHEN s.status = 'PROCESSING' AND s.total_chunks > 0
                          AND (SELECT count(*) FROM story_chunks c
                              WHERE c.story_id = s.id AND NOT EXISTS (
                                SELECT 1 FROM embeddings e WHERE e.kind = '${raw(STORY_KIND)}'
                                   AND e.item_id = c.id AND e.model = ${model})) = 0
                         THEN 'READY' ELSE s.status END
         WHERE s.id = ${storyId}
         RETURNING ${COLUMNS}`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  /** Passages facts have not been read from yet, in order. */
  chunksToExtract(
    storyId: string,
    limit: number,
  ): Promise<
    { id: string; ordinal: number; page: number; content: string; heading: string | null }[]
  > {
    return run(
      this.m(),
      sql`SELECT id, ordinal, page, content, heading FROM story_chunks
        WHERE story_id = ${storyId} AND facts_extracted_at IS NULL
        ORDER BY ordinal LIMIT ${limit}`,
    );
  }

  async countToExtract(storyId: string): Promise<number> {
    const rows: { n: number }[] = await run(
      this.m(),
      sql`SELECT count(*)::int AS n FROM story_chunks WHERE story_id = ${storyId} AND facts_extracted_at IS NULL`,
    );
    return rows[0]?.n ?? 0;
  }

  /** Marks passages as read for facts; false when another run got there first. */
  async markExtracted(manager: EntityManager, ids: string[]): Promise<boolean> {
    const rows = await run<{ id: string }>(
      manager,
      sql`UPDATE story_chunks SET facts_extracted_at = now()
          WHERE id = ANY(${ids}::uuid[]) AND facts_extracted_at IS NULL
          RETURNING id`,
    );
    return rows.length === ids.length;
  }

  /** READY stories with passages not yet read for facts, in a scope, oldest first. */
  storiesToExtract(scope: {
    legacyId?: string | null;
    authorId?: string | null;
  }): Promise<{ id: string; pending: number }[]> {
    // An author who left keeps their stories, but facts are no longer read from them.
    const where = [sql`s.status = 'READY'`, isMemberSql(raw('s.legacy_id'), raw('s.author_id'))];
    if (scope.legacyId) where.push(sql`s.legacy_id = ${scope.legacyId}`);
    if (scope.authorId) where.push(sql`s.author_id = ${scope.authorId}`);
    return run(
      this.m(),
      sql`SELECT s.id, count(c.id)::int AS pending
         FROM stories s JOIN story_chunks c ON c.story_id = s.id AND c.facts_extracted_at IS NULL
        WHERE ${join(where, ' AND ')}
        GROUP BY s.id, s.created_at ORDER BY s.created_at, s.id`,
    );
  }

  /** FAILED with a reason, unless it is READY already; the story as it is then. */
  async fail(storyId: string, reason: string): Promise<StoryEntity | null> {
    const rows = await run<StoryEntity>(
      this.m(),
      sql`UPDATE stories s SET status = 'FAILED', failure_reason = ${reason}
          WHERE s.id = ${storyId} AND s.status = 'PROCESSING'
          RETURNING ${COLUMNS}`,
    );
    return rows[0] ? revive(rows[0]) : null;
  }

  /** Chunks by id with their story, for search results. */
  chunkProvenance(ids: readonly string[]): Promise<
    {
      id: string;
      storyId: string;
      title: string;
      page: number;
      charStart: number;
      charEnd: number;
    }[]
  > {
    if (ids.length === 0) return Promise.resolve([]);
    return run(
      this.m(),
      sql`SELECT c.id, c.story_id AS "storyId", s.title, c.page, c.char_start AS "charStart",
              c.char_end AS "charEnd"
         FROM story_chunks c JOIN stories s ON s.id = c.story_id
        WHERE c.id = ANY(${ids}::uuid[])`,
    );
  }
}
