import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import { ConversationImportService } from '../conversations/conversation-import.service.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { FactEvent } from '../facts/fact-events.service.js';
import { FactWriterService } from '../facts/fact-writer.service.js';
import { FactStatus } from '../facts/fact.enums.js';
import type { UserEntity } from '../identity/user.entity.js';
import { JobsService } from '../jobs/jobs.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { MemoriesService } from '../memories/memories.service.js';
import { EXPORT_FORMAT_NAME, EXPORT_VERSION } from '../memories/memory-export.js';
import { PeriodSummariesService } from '../periods/period-summaries.service.js';
import { PERIOD_KIND } from '../periods/period-summary.repository.js';
import { StoriesService } from '../stories/stories.service.js';
import { StoryEventsService } from '../stories/story-events.service.js';
import { StoryChange } from '../stories/story.enums.js';
import type { StoryEntity } from '../stories/story.entity.js';
import {
  ArchivedConversation,
  ArchivedFact,
  ArchivedMemory,
  ArchivedPeriodSummary,
  ArchivedStory,
  ArchivedTurn,
  ArchivePart,
  parseLine,
  PART_PATHS,
  PARTS,
} from './archive-format.js';
import { ArchiveImportFailed, deterministicFailure } from './archive-failure.js';
import type { ArchiveReader } from './archive-reader.js';
import type { ImportCursor, LegacyArchiveEntity } from './archive.entity.js';
import { ArchiveRepository } from './archive.repository.js';
import { ArchiveException } from './archive.exception.js';

/** Lines imported per transaction, by part: a story (and its file) is one. */
const BATCH: Record<ArchivePart, number> = {
  facts: 50,
  stories: 1,
  conversations: 100,
  turns: 500,
  memories: 200,
  periodSummaries: 100,
};

/** What an import tells its caller as it goes: the part and the lines done in all. */
export type ImportProgress = (cursor: ImportCursor, done: number) => Promise<void>;

/**
 * Brings an archive in as a new legacy its importer owns. Each part is read line by line; a
 * batch of lines is written in one transaction together with the import's cursor (the part and
 * the last line written) and the ids it gave the archive's items, so an import cut short at any
 * moment goes on from the last batch that committed: nothing is written twice, nothing skipped.
 * Memories go through the memories' own import (its transaction), which knows an archive's
 * memory by its reference and merges it rather than adding it again. Everything is written
 * through the service that owns it, as by its member: facts as written by hand (merged with
 * the importer's own restatements), stories with their files and indexed again by their job,
 * conversations as imported ones (searched and summarized by the usual jobs, no memories taken
 * from them), memories with the import's consent rules, period summaries as they were.
 */
@Injectable()
export class ArchiveImportService {
  private readonly logger = new Logger('ArchiveImport');

  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: ArchiveRepository,
    private readonly legacies: LegaciesService,
    private readonly facts: FactWriterService,
    private readonly stories: StoriesService,
    private readonly storyEvents: StoryEventsService,
    private readonly conversations: ConversationsService,
    private readonly conversationImport: ConversationImportService,
    private readonly memories: MemoriesService,
    private readonly periods: PeriodSummariesService,
    private readonly embeddings: EmbeddingService,
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
  ) {}

  /** The legacy the import fills: made once, with the archive's row, in one transaction. */
  async legacyFor(archive: LegacyArchiveEntity, user: UserEntity, reader: ArchiveReader) {
    if (archive.legacyId) return archive.legacyId;
    return this.dataSource.transaction(async (m) => {
      const locked = await this.repo.lock(m, archive.id);
      if (locked?.legacyId) return locked.legacyId;
      const legacy = reader.manifest.legacy;
      const created = await this.legacies.createIn(m, user, {
        name: legacy.name,
        description: legacy.description,
        bornOn: legacy.bornOn,
        diedOn: legacy.diedOn,
        persona: legacy.persona,
      });
      await this.repo.setCursor(m, archive.id, { part: PARTS[0], line: 0 }, 0);
      await this.repo.setStatus(m, archive.id, locked!.status, { legacyId: created.id });
      return created.id;
    });
  }

  /** Imports every part from the cursor on. */
  async run(
    archive: LegacyArchiveEntity,
    user: UserEntity,
    legacyId: string,
    reader: ArchiveReader,
    progress: ImportProgress,
  ): Promise<void> {
    const legacy = (await this.legacies.findForMember(user.id, legacyId))!;
    const cursor = archive.cursor ?? { part: PARTS[0], line: 0 };
    let done = archive.done;
    const limits = {
      maxMessageChars: this.config.env.MESSAGE_MAX_LENGTH,
      maxStoryChars: this.config.env.DOCUMENT_MAX_CHARS,
    };
    const ctx: Batch = { archive, user, legacyId, legacyName: legacy.name, reader };
    for (const part of PARTS.slice(PARTS.indexOf(cursor.part as ArchivePart))) {
      const skip = part === cursor.part ? cursor.line : 0;
      let batch: { line: number; value: unknown }[] = [];
      const size =
        part === 'memories'
          ? Math.min(BATCH.memories, this.config.env.MEMORY_IMPORT_MAX)
          : BATCH[part];
      const flush = async () => {
        if (batch.length === 0) return;
        const first = batch[0].line;
        const last = batch[batch.length - 1].line;
        try {
          await this.write(
            ctx,
            part,
            batch.map((b) => b.value),
            { part, line: last },
            done + batch.length,
          );
        } catch (err) {
          // Said of its place; an error another try may get past goes on as it is.
          const where = `${PART_PATHS[part]}, ${first === last ? `line ${first}` : `lines ${first} to ${last}`}`;
          const failure = deterministicFailure(err, where);
          throw failure ? new ArchiveImportFailed(failure, err) : err;
        }
        done += batch.length;
        batch = [];
        await progress({ part, line: last }, done);
      };
      for await (const { line, text } of reader.lines(part, skip)) {
        batch.push({ line, value: parseLine(part, text, line, limits) });
        if (batch.length >= size) await flush();
      }
      await flush();
      // The part is done: the next starts at its first line, even if it has none.
      const next = PARTS[PARTS.indexOf(part) + 1];
      if (next) {
        await this.dataSource.transaction((m) =>
          this.repo.setCursor(m, archive.id, { part: next, line: 0 }, done),
        );
      }
    }
    this.jobs.nudge();
  }

  private async write(
    ctx: Batch,
    part: ArchivePart,
    values: unknown[],
    cursor: ImportCursor,
    done: number,
  ): Promise<void> {
    switch (part) {
      case 'facts':
        return this.writeFacts(ctx, values as ArchivedFact[], cursor, done);
      case 'stories':
        return this.writeStories(ctx, values as ArchivedStory[], cursor, done);
      case 'conversations':
        return this.writeConversations(ctx, values as ArchivedConversation[], cursor, done);
      case 'turns':
        return this.writeTurns(ctx, values as ArchivedTurn[], cursor, done);
      case 'memories':
        return this.writeMemories(ctx, values as ArchivedMemory[], cursor, done);
      case 'periodSummaries':
        return this.writePeriods(ctx, values as ArchivedPeriodSummary[], cursor, done);
    }
  }

  /** The facts that were current for the archive's member, as the importer's. */
  private async writeFacts(ctx: Batch, facts: ArchivedFact[], cursor: ImportCursor, done: number) {
    // Superseded facts stay in the archive as history; the legacy takes what was current.
    const current = facts.filter((f) => f.status === FactStatus.ACTIVE);
    const prepared = await this.facts.prepare(current.map((f) => f.content));
    const events: FactEvent[] = await this.dataSource.transaction(async (m) => {
      const written = await this.facts.applyArchived(
        m,
        { legacyId: ctx.legacyId, legacyName: ctx.legacyName, authorId: ctx.user.id },
        current.map((f) => ({
          content: f.content,
          category: f.category,
          confidence: f.confidence,
          visibility: f.visibility,
          validFrom: new Date(f.validFrom),
          createdAt: new Date(f.createdAt),
        })),
        prepared,
      );
      await this.repo.setCursor(m, ctx.archive.id, cursor, done);
      return written;
    });
    await this.facts.publish(events);
  }

  private async writeStories(
    ctx: Batch,
    stories: ArchivedStory[],
    cursor: ImportCursor,
    done: number,
  ) {
    const stored: StoryEntity[] = [];
    for (const story of stories) {
      const bytes = await ctx.reader.file(story.file);
      await this.dataSource.transaction(async (m) => {
        const row = await this.stories.storeArchived(
          m,
          ctx.user,
          ctx.legacyId,
          {
            title: story.title,
            kind: story.kind,
            format: story.format,
            visibility: story.visibility,
            pages: story.pages,
            fileName: story.fileName,
            mimeType: story.mimeType,
            occurredAt: story.occurredAt ? new Date(story.occurredAt) : null,
          },
          bytes,
        );
        await this.repo.mapId(m, ctx.archive.id, 'story', story.id, row.id);
        await this.repo.setCursor(m, ctx.archive.id, cursor, done);
        stored.push(row);
      });
    }
    this.jobs.nudge();
    for (const row of stored) await this.storyEvents.publish(row, StoryChange.CREATED, false);
  }

  private async writeConversations(
    ctx: Batch,
    conversations: ArchivedConversation[],
    cursor: ImportCursor,
    done: number,
  ) {
    await this.dataSource.transaction(async (m) => {
      for (const c of conversations) {
        const created = await this.conversationImport.createArchived(
          m,
          ctx.user,
          ctx.legacyId,
          c.title,
        );
        await this.repo.mapId(m, ctx.archive.id, 'conversation', c.id, created.id);
      }
      await this.repo.setCursor(m, ctx.archive.id, cursor, done);
    });
  }

  private async writeTurns(ctx: Batch, turns: ArchivedTurn[], cursor: ImportCursor, done: number) {
    const ids = [...new Set(turns.map((t) => t.conversationId))];
    const mapped = await this.repo.mappedIds(ctx.archive.id, 'conversation', ids);
    const byConversation = new Map<string, ArchivedTurn[]>();
    for (const t of turns) {
      if (!mapped.has(t.conversationId)) {
        throw ArchiveException.invalid(
          `data/turns.jsonl names conversation ${t.conversationId}, which data/conversations.jsonl does not hold.`,
        );
      }
      byConversation.set(t.conversationId, [...(byConversation.get(t.conversationId) ?? []), t]);
    }
    const found = await this.conversations.findByIds([...mapped.values()]);
    const events = await this.dataSource.transaction(async (m) => {
      const stored = [];
      for (const [original, group] of byConversation) {
        const conversation = found.find((c) => c.id === mapped.get(original)) as ConversationEntity;
        stored.push(
          await this.conversationImport.appendArchived(
            m,
            conversation,
            group.map((t) => ({
              role: t.role,
              content: t.content,
              metadata: t.metadata,
              occurredAt: new Date(t.occurredAt),
              // Left out of search, summaries, facts and memories: a notice, or a reply the
              // archive's member could not read.
              placeholder: t.placeholder || t.withheld,
            })),
          ),
        );
      }
      await this.repo.setCursor(m, ctx.archive.id, cursor, done);
      return stored;
    });
    for (const event of events) await this.conversationImport.runArchivedAfterCommit(event);
  }

  /**
   * The archive's memories as the importer's, through importMemories: each is known by a
   * reference made of the archive and its id there, so a batch imported again (a run cut short
   * after it committed) is recognised and merged, never added twice.
   */
  private async writeMemories(
    ctx: Batch,
    memories: ArchivedMemory[],
    cursor: ImportCursor,
    done: number,
  ) {
    const conversationIds = [
      ...new Set(memories.flatMap((m) => (m.conversationId ? [m.conversationId] : []))),
    ];
    const mapped = await this.repo.mappedIds(ctx.archive.id, 'conversation', conversationIds);
    const ref = (id: string | null) => (id ? `archive:${ctx.archive.id}:${id}` : null);
    const json = JSON.stringify({
      format: EXPORT_FORMAT_NAME,
      version: EXPORT_VERSION,
      memories: memories.map((m) => ({
        ...m,
        id: ref(m.id),
        sourceReference: null,
        supersededBy: ref(m.supersededBy),
        legacyId: ctx.legacyId,
        conversationId: m.conversationId ? (mapped.get(m.conversationId) ?? null) : null,
        sourceMessageId: null,
      })),
    });
    await this.memories.import(ctx.user, json);
    await this.dataSource.transaction((m) => this.repo.setCursor(m, ctx.archive.id, cursor, done));
  }

  private async writePeriods(
    ctx: Batch,
    summaries: ArchivedPeriodSummary[],
    cursor: ImportCursor,
    done: number,
  ) {
    const ids = [...new Set(summaries.flatMap((s) => s.conversationIds))];
    const mapped = await this.repo.mappedIds(ctx.archive.id, 'conversation', ids);
    const stored = await this.dataSource.transaction(async (m) => {
      const rows = await this.periods.importArchived(
        m,
        ctx.user.id,
        ctx.legacyId,
        summaries.map((s) => ({
          period: s.period,
          start: s.start,
          end: s.end,
          timeZone: s.timeZone,
          startsAt: new Date(s.startsAt),
          endsAt: new Date(s.endsAt),
          summary: s.summary,
          emotionalTone: s.emotionalTone,
          keyThemes: s.keyThemes,
          recurringPatterns: s.recurringPatterns,
          people: s.people,
          places: s.places,
          conversationCount: s.conversationCount,
          turnCount: s.turnCount,
          conversationIds: s.conversationIds.flatMap((id) => mapped.get(id) ?? []),
          aggregated: s.aggregated,
          model: s.model,
          promptVersion: s.promptVersion,
        })),
      );
      await this.repo.setCursor(m, ctx.archive.id, cursor, done);
      return rows;
    });
    // Searchable at once when the encoder answers; otherwise the sweeper embeds them.
    try {
      await this.embeddings.embedAndStore(
        PERIOD_KIND,
        stored.map((s) => ({ id: s.id, text: s.summary, legacyId: s.legacyId, userId: s.userId })),
      );
    } catch (err) {
      this.logger.warn({ msg: 'period summaries left to the sweeper', error: String(err) });
    }
  }
}

interface Batch {
  archive: LegacyArchiveEntity;
  user: UserEntity;
  legacyId: string;
  legacyName: string;
  reader: ArchiveReader;
}
