import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Injectable } from '@nestjs/common';
import type { Connection } from '../common/pagination/connection.js';
import { AppConfig } from '../config/app-config.js';
import { participantsAsSeen } from '../conversations/conversation.mapper.js';
import type { ParticipantRow } from '../conversations/conversation-participant.repository.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { FactsService } from '../facts/facts.service.js';
import { FactStatus } from '../facts/fact.enums.js';
import type { UserEntity } from '../identity/user.entity.js';
import { UsersService } from '../identity/users.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { MemoriesService } from '../memories/memories.service.js';
import { toExported } from '../memories/memory-export.js';
import type { MemoryFilterInput } from '../memories/dto/memory.inputs.js';
import { PeriodSummariesService } from '../periods/period-summaries.service.js';
import { StoriesService } from '../stories/stories.service.js';
import { StoryFormat } from '../stories/story.enums.js';
import { savedFileName } from '../stories/story-files.js';
import { withheldFrom } from '../conversations/withheld-reply.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  ArchivedConversation,
  ArchivedFact,
  ArchivedLegacy,
  ArchivedPeriodSummary,
  ArchivedStory,
  ArchivedTurn,
  ArchiveManifest,
  ArchivePart,
  INDEX_PATH,
  iso,
  safeFileName,
  MANIFEST_PATH,
  PART_PATHS,
  PARTS,
} from './archive-format.js';
import * as html from './archive-html.js';
import type { ArchiveCounts } from './archive.entity.js';
import { ArchiveStore } from './archive-store.js';
import { Spool, ZipSink } from './zip-sink.js';

/** The stages of an export, as its progress reports them. */
export const EXPORT_STAGES = [
  'facts',
  'stories',
  'conversations',
  'memories',
  'periodSummaries',
  'writing',
  'storing',
] as const;
export type ExportStage = (typeof EXPORT_STAGES)[number];

export interface ExportProgress {
  stage: ExportStage;
  counts: ArchiveCounts;
}

/** Display names of the people an archive names, fetched a page at a time and kept. */
class People {
  readonly names = new Map<string, string | null>();

  constructor(private readonly users: UsersService) {}

  async ensure(ids: Iterable<string>): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.names.has(id));
    if (missing.length === 0) return;
    const found = await this.users.findByIds(missing);
    for (const id of missing) this.names.set(id, null);
    for (const u of found) this.names.set(u.id, u.displayName);
  }
}

/** Every page of a connection, read `first` at a time. */
async function* pages<T>(
  read: (args: { first: number; after?: string }) => Promise<Connection<T>>,
  first: number,
): AsyncGenerator<T[]> {
  let after: string | undefined;
  for (;;) {
    const page = await read({ first, after });
    if (page.nodes.length > 0) yield page.nodes;
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
    after = page.pageInfo.endCursor;
  }
}

/**
 * Writes the archive of what one member may see of a legacy: every item is read through the
 * service that owns it, as that member (the API's own paths, with their rules: facts as
 * fact-visibility.ts shows them, stories as story-visibility.ts, the member's conversations and
 * turns as conversation access and withheld-reply.ts give them, their own memories and period
 * summaries), page by page. Story files are read one at a time and streamed into the ZIP; the
 * text parts are spooled to scratch files and added at the end, so memory stays bounded
 * whatever the size of the legacy.
 */
@Injectable()
export class ArchiveExportService {
  constructor(
    private readonly legacies: LegaciesService,
    private readonly facts: FactsService,
    private readonly stories: StoriesService,
    private readonly conversations: ConversationsService,
    private readonly memories: MemoriesService,
    private readonly periods: PeriodSummariesService,
    private readonly users: UsersService,
    private readonly store: ArchiveStore,
    private readonly config: AppConfig,
  ) {}

  /**
   * Writes the archive to a scratch file and returns its path with what it holds. The caller
   * puts it in the store. `progress` is called at each stage and every few hundred items.
   */
  async write(
    viewer: UserEntity,
    archiveId: string,
    legacyId: string,
    progress: (p: ExportProgress) => Promise<void>,
  ): Promise<{ path: string; counts: ArchiveCounts; fileName: string }> {
    const { legacy } = await this.legacies.get(viewer, legacyId);
    const exportedAt = new Date();
    const mtime = exportedAt;
    const pageSize = this.config.env.MAX_PAGE_SIZE;
    const people = new People(this.users);
    await people.ensure([viewer.id]);
    const counts: ArchiveCounts = {
      facts: 0,
      stories: 0,
      storyBytes: 0,
      conversations: 0,
      turns: 0,
      memories: 0,
      periodSummaries: 0,
    };
    let lastReport = 0;
    const report = async (stage: ExportStage, force = false) => {
      if (!force && Date.now() - lastReport < 500) return;
      lastReport = Date.now();
      await progress({ stage, counts: { ...counts } });
    };

    // Named after the archive: a run cut short leaves a file the next run writes over.
    const zipPath = await this.store.scratchFile(`.zip`, `export-${archiveId}`);
    const spools = new Map<ArchivePart | 'index', Spool>();
    const spool = async (name: ArchivePart | 'index') => {
      const s = new Spool(await this.store.scratchFile(`.${name}`));
      spools.set(name, s);
      return s;
    };
    const zip = new ZipSink(zipPath);
    try {
      const archivedLegacy: ArchivedLegacy = {
        id: legacy.id,
        name: legacy.name,
        description: legacy.description,
        bornOn: legacy.bornOn,
        diedOn: legacy.diedOn,
        persona: legacy.persona,
        createdAt: iso(legacy.createdAt)!,
      };
      const index = await spool('index');
      await index.write(html.pageStart(legacy.name, 0));
      await index.write(
        html.legacyHeader(
          archivedLegacy,
          people.names.get(viewer.id) ?? 'a member',
          exportedAt.toISOString(),
        ),
      );

      // Facts: those the member sees, current and superseded, as they see them.
      await report('facts', true);
      const facts = await spool('facts');
      await index.write(html.sectionStart('facts', 'Facts'));
      for (const status of [FactStatus.ACTIVE, FactStatus.SUPERSEDED]) {
        for await (const page of pages(
          (args) => this.facts.list(viewer, legacyId, { status }, args),
          pageSize,
        )) {
          await people.ensure(page.map((f) => f.authorId));
          for (const f of page) {
            const fact: ArchivedFact = {
              id: f.id,
              authorId: f.authorId,
              content: f.content,
              category: f.category,
              visibility: f.visibility,
              status: f.status,
              confidence: Math.round(Number(f.confidence) * 1000) / 1000,
              mentionCount: f.mentionCount,
              validFrom: iso(f.validFrom)!,
              validTo: iso(f.validTo),
              supersededBy: f.supersededBy,
              createdAt: iso(f.createdAt)!,
              updatedAt: iso(f.updatedAt)!,
            };
            await facts.line(fact);
            await index.write(html.factItem(fact, people.names));
          }
          counts.facts = facts.lines;
          await report('facts');
        }
      }
      await index.write(html.sectionEnd(facts.lines, 'No fact you may see.'));

      // Stories: each original file into the ZIP as it is read, one at a time.
      await report('stories', true);
      const stories = await spool('stories');
      await index.write(html.sectionStart('stories', 'Stories and documents'));
      for await (const page of pages(
        (args) => this.stories.list(viewer, legacyId, {}, args),
        pageSize,
      )) {
        await people.ensure(page.map((s) => s.authorId));
        for (const s of page) {
          let file: Buffer;
          let text: { number: number; text: string }[];
          try {
            file = (await this.stories.file(viewer, s.id)).bytes;
            text = await this.stories.pages(viewer, s.id, 1, Math.max(1, s.pageCount));
          } catch {
            // Deleted or taken back since the page was read: not the member's to keep now.
            continue;
          }
          // Under a name that opens as what it is: never as a page or picture that runs.
          const name = savedFileName(s.fileName, s.title, s.format);
          const story: ArchivedStory = {
            id: s.id,
            authorId: s.authorId,
            title: s.title,
            kind: s.kind,
            format: s.format,
            visibility: s.visibility,
            occurredAt: iso(s.occurredAt),
            createdAt: iso(s.createdAt)!,
            updatedAt: iso(s.updatedAt)!,
            fileName: s.fileName,
            mimeType: s.mimeType,
            sizeBytes: file.byteLength,
            file: `stories/${s.id}/${name}`,
            pages: text.map((p) => ({ number: p.number, text: p.text })),
          };
          const compress = s.format === StoryFormat.TEXT || s.format === StoryFormat.MARKDOWN;
          await zip.add(story.file, file, { compress, mtime });
          await zip.add(`stories/${s.id}.html`, html.storyPage(story, people.names), {
            compress: true,
            mtime,
          });
          await stories.line(story);
          await index.write(html.storyItem(story, people.names, `stories/${s.id}.html`));
          counts.stories = stories.lines;
          counts.storyBytes = (counts.storyBytes ?? 0) + file.byteLength;
          await report('stories');
        }
      }
      await index.write(html.sectionEnd(stories.lines, 'No story you may see.'));

      // Conversations the member takes or took part in, each turn as they may read it.
      await report('conversations', true);
      const conversations = await spool('conversations');
      const turns = await spool('turns');
      await index.write(html.sectionStart('conversations', 'Conversations'));
      const participants = new Map<string, ParticipantRow[]>();
      for await (const page of pages(
        (args) =>
          this.conversations.list(viewer, legacyId, args, async (ids) => {
            const rows = await this.conversations.participantsOf(ids);
            participants.clear();
            for (const id of ids) {
              participants.set(
                id,
                rows.filter((r) => r.conversationId === id),
              );
            }
            return ids.map((id) => participants.get(id)!);
          }),
        pageSize,
      )) {
        for (const view of page) {
          const until = view.viewer.leftAtTurn;
          const seen = participantsAsSeen(participants.get(view.id) ?? [], view.viewer.leftAt);
          await people.ensure(seen.map((p) => p.userId));
          const conversation: ArchivedConversation = {
            id: view.id,
            title: view.title,
            startedBy: view.userId,
            imported: view.imported,
            participants: seen.map((p) => p.userId),
            readableUntilTurn: until,
            turnCount: until === null ? view.nextTurnIndex : Math.min(until, view.nextTurnIndex),
            createdAt: iso(view.createdAt)!,
            lastActivityAt: iso(
              view.viewer.leftAt && view.viewer.leftAt < view.lastActivityAt
                ? view.viewer.leftAt
                : view.lastActivityAt,
            )!,
            page: `conversations/${view.id}.html`,
          };
          const pageSpool = new Spool(await this.store.scratchFile('.conversation'));
          try {
            await pageSpool.write(html.conversationStart(conversation, people.names));
            for await (const messages of pages(
              (args) => this.conversations.messagesPage(viewer.id, view.id, until, args),
              pageSize,
            )) {
              for (const m of messages) {
                const turn: ArchivedTurn = {
                  id: m.id,
                  conversationId: view.id,
                  turnIndex: m.turnIndex,
                  role: m.role,
                  authorId: m.userId,
                  content: m.content,
                  metadata: m.metadata,
                  placeholder: m.placeholder,
                  withheld: withheldFrom(m, viewer.id),
                  occurredAt: iso(m.occurredAt)!,
                  createdAt: iso(m.createdAt)!,
                };
                await turns.line(turn);
                await pageSpool.write(html.turnItem(turn, people.names));
              }
              counts.turns = turns.lines;
              await report('conversations');
            }
            await pageSpool.write(html.pageEnd());
            await pageSpool.close();
            await zip.add(conversation.page, createReadStream(pageSpool.path), {
              compress: true,
              mtime,
            });
          } finally {
            await rm(pageSpool.path, { force: true });
          }
          await conversations.line(conversation);
          await index.write(html.conversationItem(conversation));
          counts.conversations = conversations.lines;
        }
      }
      await index.write(html.sectionEnd(conversations.lines, 'No conversation of yours.'));

      // The member's own memories about this legacy, in the format of exportMemories.
      await report('memories', true);
      const memories = await spool('memories');
      await index.write(html.sectionStart('memories', 'Your memories'));
      for await (const page of pages(
        (args) =>
          this.memories.list(viewer, { legacyId } as MemoryFilterInput, {
            first: args.first,
            after: args.after,
          }),
        pageSize,
      )) {
        for (const m of page) {
          const memory = toExported(m);
          await memories.line(memory);
          await index.write(html.memoryItem(memory));
        }
        counts.memories = memories.lines;
        await report('memories');
      }
      await index.write(html.sectionEnd(memories.lines, 'No memory of yours about this legacy.'));

      // The member's own weekly, monthly and yearly summaries.
      await report('periodSummaries', true);
      const periods = await spool('periodSummaries');
      await index.write(html.sectionStart('periods', 'Looking back'));
      for await (const page of pages(
        (args) => this.periods.list(viewer, legacyId, null, args),
        pageSize,
      )) {
        for (const p of page) {
          const summary: ArchivedPeriodSummary = {
            id: p.id,
            period: p.period,
            start: p.start,
            end: p.end,
            timeZone: p.timeZone,
            startsAt: iso(p.startsAt)!,
            endsAt: iso(p.endsAt)!,
            summary: p.summary,
            emotionalTone: p.emotionalTone,
            keyThemes: p.keyThemes,
            recurringPatterns: p.recurringPatterns,
            people: p.people,
            places: p.places,
            conversationCount: p.conversationCount,
            turnCount: p.turnCount,
            conversationIds: p.conversationIds,
            aggregated: p.aggregated,
            model: p.model,
            promptVersion: p.promptVersion,
            createdAt: iso(p.createdAt)!,
            updatedAt: iso(p.updatedAt)!,
          };
          await periods.line(summary);
          await index.write(html.periodItem(summary));
        }
        counts.periodSummaries = periods.lines;
        await report('periodSummaries');
      }
      await index.write(html.sectionEnd(periods.lines, 'No weekly, monthly or yearly summary.'));
      await index.write(html.pageEnd());

      // The spooled parts, then the manifest.
      await report('writing', true);
      for (const [name, s] of spools) {
        await s.close();
        const path = name === 'index' ? INDEX_PATH : PART_PATHS[name];
        await zip.add(path, createReadStream(s.path), { compress: true, mtime });
      }
      const manifest: ArchiveManifest = {
        format: ARCHIVE_FORMAT,
        version: ARCHIVE_VERSION,
        exportedAt: exportedAt.toISOString(),
        exportedBy: { id: viewer.id, displayName: people.names.get(viewer.id) ?? null },
        legacy: archivedLegacy,
        people: [...people.names].map(([id, displayName]) => ({ id, displayName })),
        parts: Object.fromEntries(
          PARTS.map((part) => [part, { path: PART_PATHS[part], count: spools.get(part)!.lines }]),
        ) as ArchiveManifest['parts'],
        storyBytes: counts.storyBytes ?? 0,
      };
      await zip.add(MANIFEST_PATH, `${JSON.stringify(manifest, null, 2)}\n`, {
        compress: true,
        mtime,
      });
      await zip.finish();
      const day = exportedAt.toISOString().slice(0, 10);
      return {
        path: zipPath,
        counts,
        fileName: `${safeFileName(legacy.name, 'legacy')} ${day}.zip`,
      };
    } catch (err) {
      await zip.finish().catch(() => undefined);
      await rm(zipPath, { force: true });
      throw err;
    } finally {
      for (const s of spools.values()) {
        await s.close().catch(() => undefined);
        await rm(s.path, { force: true });
      }
    }
  }
}
