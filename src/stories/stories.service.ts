import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { AppConfig } from '../config/app-config.js';
import { FactEvent, FactEventsService } from '../facts/fact-events.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { JobsService } from '../jobs/jobs.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { visibilityChanger } from '../legacies/moderation.js';
import { isModelError } from '../llm/model.errors.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { DocumentParseError, parseDocument } from './parsing/document-parser.js';
import { StoryEventsService } from './story-events.service.js';
import { STORY_EXTRACT_JOB, StoryFactsService } from './story-facts.service.js';
import { STORY_INDEX_JOB } from './story-jobs.js';
import { StoryEntity, StoryPage } from './story.entity.js';
import {
  StoryChange,
  StoryFormat,
  StoryKind,
  StoryStatus,
  StoryVisibility,
} from './story.enums.js';
import { StoryErrorCode, StoryException } from './story.exception.js';
import { StoryListFilter, StoryRepository } from './story.repository.js';
import { StoryLimitsService } from './story-limits.service.js';
import { canSeeStory, mayModerate } from './story-visibility.js';
import { checkArchivedFile } from './story-files.js';

/** Model calls extractStory makes while its caller waits (8 passages each). */
const INLINE_EXTRACT_CALLS = 2;

/** The type a file is served with is the one its content was read as, never the client's claim. */
const MIME_TYPES: Record<StoryFormat, string> = {
  TEXT: 'text/plain; charset=utf-8',
  MARKDOWN: 'text/markdown; charset=utf-8',
  PDF: 'application/pdf',
  DOCX: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export interface UploadedFile {
  bytes: Uint8Array;
  fileName: string;
  mimeType: string | null;
}

export interface StoryFields {
  title?: string | null;
  visibility?: StoryVisibility | null;
  occurredAt?: Date | null;
}

/**
 * Stories written in the app and documents uploaded to a legacy: adding, reading, editing,
 * sharing (the facts' rules: story-visibility.ts), deleting, and indexing them for search in
 * the background (chunks, full text, vectors), with progress on the story.
 */
@Injectable()
export class StoriesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: StoryRepository,
    private readonly legacies: LegaciesService,
    private readonly jobs: JobsService,
    private readonly events: StoryEventsService,
    private readonly facts: StoryFactsService,
    private readonly factEvents: FactEventsService,
    private readonly rateLimits: RateLimitService,
    private readonly limits: StoryLimitsService,
    private readonly config: AppConfig,
  ) {}

  /**
   * Before an upload is read: the uploader is a member. Room is not checked here: the request
   * declares only its size, and it is checked exactly when the file is stored.
   */
  async assertMayUpload(user: UserEntity, legacyId: string): Promise<void> {
    await this.legacies.requireMember(user.id, legacyId);
  }

  /** addStory: text or Markdown written in the app. */
  async add(
    user: UserEntity,
    input: StoryFields & { legacyId: string; content: string; title: string },
  ): Promise<StoryEntity> {
    await this.legacies.requireMember(user.id, input.legacyId);
    const content = this.limits.content(input.content);
    return this.store(user, input.legacyId, {
      title: this.limits.title(input.title),
      kind: StoryKind.STORY,
      format: StoryFormat.MARKDOWN,
      visibility: input.visibility ?? StoryVisibility.PRIVATE,
      pages: [{ number: 1, text: content }],
      file: {
        bytes: new TextEncoder().encode(content),
        fileName: null,
        mimeType: MIME_TYPES.MARKDOWN,
      },
      occurredAt: input.occurredAt ?? null,
    });
  }

  /**
   * uploadDocument: a text, Markdown, PDF or DOCX file. It is read before anything is stored:
   * a file that cannot be read is refused (BAD_USER_INPUT naming the problem), none is kept half.
   */
  async upload(
    user: UserEntity,
    legacyId: string,
    file: UploadedFile,
    fields: StoryFields,
  ): Promise<StoryEntity> {
    await this.legacies.requireMember(user.id, legacyId);
    let parsed;
    try {
      parsed = await parseDocument(file.bytes, file.fileName, file.mimeType, {
        maxBytes: this.config.env.DOCUMENT_MAX_BYTES,
        maxPages: this.config.env.DOCUMENT_MAX_PAGES,
        maxChars: this.config.env.DOCUMENT_MAX_CHARS,
        maxUnzippedBytes: this.config.env.DOCUMENT_MAX_UNZIPPED_BYTES,
        maxMemoryMb: this.config.env.DOCUMENT_PARSE_MEMORY_MB,
        timeoutMs: this.config.env.DOCUMENT_PARSE_TIMEOUT_MS,
        concurrency: this.config.env.DOCUMENT_PARSE_CONCURRENCY,
      });
    } catch (err) {
      if (err instanceof DocumentParseError) {
        throw new StoryException(StoryErrorCode.UNREADABLE_DOCUMENT, err.message, 'file');
      }
      throw err;
    }
    const fallback = file.fileName.replace(/\.[^.]+$/, '').trim() || 'Untitled document';
    return this.store(user, legacyId, {
      title: this.limits.title(fields.title?.trim() || parsed.title || fallback),
      kind: StoryKind.DOCUMENT,
      format: parsed.format as StoryFormat,
      visibility: fields.visibility ?? StoryVisibility.PRIVATE,
      pages: parsed.pages,
      file: {
        bytes: file.bytes,
        fileName: file.fileName || null,
        mimeType: MIME_TYPES[parsed.format as StoryFormat],
      },
      occurredAt: fields.occurredAt ?? null,
    });
  }

  private async store(
    user: UserEntity,
    legacyId: string,
    story: {
      title: string;
      kind: StoryKind;
      format: StoryFormat;
      visibility: StoryVisibility;
      pages: StoryPage[];
      file: { bytes: Uint8Array; fileName: string | null; mimeType: string | null };
      occurredAt: Date | null;
    },
  ): Promise<StoryEntity> {
    const stored = await this.dataSource.transaction(async (m) => {
      await this.limits.countStory(m, user);
      await this.limits.assertRoom(m, user, legacyId, story.file.bytes.byteLength);
      const row = await this.repo.insert(m, {
        legacyId,
        authorId: user.id,
        title: story.title,
        kind: story.kind,
        format: story.format,
        visibility: story.visibility,
        pages: story.pages,
        sizeBytes: story.file.bytes.byteLength,
        fileName: story.file.fileName,
        mimeType: story.file.mimeType,
        occurredAt: story.occurredAt,
      });
      await this.repo.saveFile(m, row.id, story.file.bytes);
      await this.jobs.enqueue(STORY_INDEX_JOB, row.id, { storyId: row.id }, { manager: m });
      return row;
    });
    this.jobs.nudge();
    await this.events.publish(stored, StoryChange.CREATED, false);
    return stored;
  }

  /**
   * A story brought in by a legacy archive's import, inside its transaction: the importer's,
   * with its original file and its text as the archive holds them, indexed again by the usual
   * job. Its room is checked (MEMBER_STORAGE_MAX_BYTES); the daily count is not (the import is
   * one act, counted by its own limit). Publish with `publish` once the transaction committed.
   */
  async storeArchived(
    m: EntityManager,
    user: UserEntity,
    legacyId: string,
    story: {
      title: string;
      kind: StoryKind;
      format: StoryFormat;
      visibility: StoryVisibility;
      pages: StoryPage[];
      fileName: string | null;
      mimeType?: string | null;
      occurredAt: Date | null;
    },
    bytes: Uint8Array,
  ): Promise<StoryEntity> {
    checkArchivedFile(story, bytes);
    if (bytes.byteLength > this.config.env.DOCUMENT_MAX_BYTES) {
      throw new StoryException(
        StoryErrorCode.UNREADABLE_DOCUMENT,
        `The file of "${story.title}" is larger than DOCUMENT_MAX_BYTES.`,
        'file',
      );
    }
    const chars = story.pages.reduce((n, p) => n + p.text.length, 0);
    if (chars > this.config.env.DOCUMENT_MAX_CHARS) {
      throw new StoryException(
        StoryErrorCode.UNREADABLE_DOCUMENT,
        `The text of "${story.title}" is longer than DOCUMENT_MAX_CHARS.`,
        'file',
      );
    }
    await this.limits.assertRoom(m, user, legacyId, bytes.byteLength);
    const row = await this.repo.insert(m, {
      legacyId,
      authorId: user.id,
      title: this.limits.title(story.title),
      kind: story.kind,
      format: story.format,
      visibility: story.visibility,
      pages: story.pages,
      sizeBytes: bytes.byteLength,
      fileName: story.fileName,
      mimeType: MIME_TYPES[story.format],
      occurredAt: story.occurredAt,
    });
    await this.repo.saveFile(m, row.id, bytes);
    await this.jobs.enqueue(STORY_INDEX_JOB, row.id, { storyId: row.id }, { manager: m });
    return row;
  }

  async list(
    user: UserEntity,
    legacyId: string,
    filter: StoryListFilter,
    args: { first?: number; after?: string },
  ): Promise<Connection<StoryEntity>> {
    await this.legacies.requireMember(user.id, legacyId);
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor ? this.cursorOf(request.cursor) : null;
    const rows = await this.repo.page(user.id, legacyId, filter, request.limit + 1, after);
    return toConnection(rows, request, (r) => encodeCursor([r.createdAt.toISOString(), r.id]));
  }

  /**
   * The user's own stories in legacies they are no longer a member of: theirs to find and
   * delete (deleteStory), nothing more (their text is not readable there any more).
   */
  async listLeftBehind(
    user: UserEntity,
    args: { first?: number; after?: string },
  ): Promise<Connection<StoryEntity>> {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor ? this.cursorOf(request.cursor) : null;
    const rows = await this.repo.pageLeftBehind(user.id, request.limit + 1, after);
    return toConnection(rows, request, (r) => encodeCursor([r.createdAt.toISOString(), r.id]));
  }

  private cursorOf(cursor: string): { createdAt: string; id: string } {
    const [createdAt, id] = decodeCursor(cursor, 'after', 2) as string[];
    return { createdAt, id };
  }

  /** A story the viewer may see, in a legacy they belong to; NOT_FOUND otherwise. */
  async get(user: UserEntity, id: string): Promise<StoryEntity> {
    const story = await this.repo.findById(id);
    if (!story || !canSeeStory(story, user.id)) throw StoryException.notFound();
    await this.legacies.requireMemberOr(user.id, story.legacyId, StoryException.notFound);
    return story;
  }

  /** The original file, for those who may see the story. */
  async file(user: UserEntity, id: string): Promise<{ story: StoryEntity; bytes: Buffer }> {
    const story = await this.get(user, id);
    const bytes = await this.repo.file(story.id);
    if (!bytes) throw StoryException.notFound();
    return { story, bytes };
  }

  /** updateStory: its author edits the title, the date, or (a story written in the app) the text. */
  async update(
    user: UserEntity,
    input: { id: string; title?: string | null; content?: string | null; occurredAt?: Date | null },
  ): Promise<StoryEntity> {
    const story = await this.get(user, input.id);
    if (story.authorId !== user.id) {
      throw new StoryException(
        StoryErrorCode.NOT_STORY_AUTHOR,
        'Only its author can edit a story.',
      );
    }
    if (input.content != null && story.kind !== StoryKind.STORY) {
      throw new StoryException(
        StoryErrorCode.NOT_EDITABLE,
        'The text of an uploaded document cannot be edited; upload a new version instead.',
        'content',
      );
    }
    const title = input.title != null ? this.limits.title(input.title) : undefined;
    const content = input.content != null ? this.limits.content(input.content) : undefined;
    const factEvents: FactEvent[] = [];
    await this.dataSource.transaction(async (m) => {
      if (!(await this.repo.lock(m, story.id))) throw StoryException.notFound();
      const before = content !== undefined ? await this.repo.text(story.id, m) : null;
      // The same text again changes nothing: its passages, vectors and facts stay.
      const rewritten =
        content !== undefined && before?.pages[0]?.text !== content ? content : null;
      const file = rewritten !== null ? new TextEncoder().encode(rewritten) : null;
      // The new text's file takes the old one's place in its author's room.
      if (file) await this.limits.assertRoom(m, user, story.legacyId, file.byteLength, story.id);
      await this.repo.update(m, story.id, {
        title,
        occurredAt: input.occurredAt,
        pages: rewritten !== null ? [{ number: 1, text: rewritten }] : undefined,
        sizeBytes: file?.byteLength,
      });
      if (file) {
        await this.repo.saveFile(m, story.id, file);
        // A new text: the old chunks and vectors go (with the facts read only from them), the
        // index job makes new ones.
        const finish = await this.factEvents.watchSource(m, { storyId: story.id }, user.id);
        await this.repo.replaceChunks(m, story, []);
        factEvents.push(...(await finish()));
        await this.jobs.enqueue(STORY_INDEX_JOB, story.id, { storyId: story.id }, { manager: m });
      }
    });
    this.jobs.nudge();
    await this.factEvents.publish(factEvents);
    const updated = (await this.repo.findById(story.id))!;
    await this.events.publish(
      updated,
      StoryChange.UPDATED,
      updated.visibility === StoryVisibility.SHARED,
    );
    return updated;
  }

  /**
   * Its author shares or unshares a story; an owner or admin can take a shared story back to
   * private (moderation), never the other way (legacies/moderation.ts).
   */
  async setVisibility(
    user: UserEntity,
    id: string,
    visibility: StoryVisibility,
  ): Promise<StoryEntity> {
    const story = await this.get(user, id);
    const changer = visibilityChanger(story, user.id, visibility === StoryVisibility.SHARED);
    if (changer === 'refused') {
      throw new StoryException(
        StoryErrorCode.NOT_STORY_AUTHOR,
        'Only its author can share a story.',
      );
    }
    if (changer === 'moderator') await this.requireModerator(user, story);
    if (story.visibility === visibility) return story;
    await this.dataSource.transaction(async (m) => {
      if (!(await this.repo.lock(m, id))) throw StoryException.notFound();
      await this.repo.setVisibility(m, id, visibility);
    });
    const updated = (await this.repo.findById(id))!;
    await this.events.publish(
      updated,
      StoryChange.VISIBILITY_CHANGED,
      story.visibility === StoryVisibility.SHARED,
    );
    return updated;
  }

  /**
   * deleteStory: by its author, or an owner or admin for a shared one. The story, its file, its
   * chunks and their vectors go at once. The author needs no membership: what they wrote is
   * theirs to delete after they leave.
   */
  async delete(user: UserEntity, id: string): Promise<string> {
    const own = await this.repo.findById(id);
    const story = own?.authorId === user.id ? own : await this.get(user, id);
    if (story.authorId !== user.id) await this.requireModerator(user, story);
    const factEvents = await this.dataSource.transaction(async (m) => {
      if (!(await this.repo.lock(m, id))) throw StoryException.notFound();
      const finish = await this.factEvents.watchSource(m, { storyId: id }, user.id);
      await this.repo.delete(m, id);
      return finish();
    });
    await this.events.publish(
      story,
      StoryChange.DELETED,
      story.visibility === StoryVisibility.SHARED,
    );
    await this.factEvents.publish(factEvents);
    return id;
  }

  private async requireModerator(user: UserEntity, story: StoryEntity): Promise<void> {
    const role = await this.legacies.requireMember(user.id, story.legacyId);
    if (!mayModerate(story, user.id, role)) {
      throw new StoryException(
        StoryErrorCode.NOT_STORY_AUTHOR,
        'Only its author, or an owner or admin for a shared story, can do this.',
      );
    }
  }

  /** extractStory: its author reads facts from a READY story now (the rest queued if need be). */
  async extract(
    user: UserEntity,
    id: string,
    shareLikeStory: boolean,
  ): Promise<{ story: StoryEntity; passagesRead: number; factsFound: number; remaining: number }> {
    const story = await this.get(user, id);
    if (story.authorId !== user.id) {
      throw new StoryException(
        StoryErrorCode.NOT_STORY_AUTHOR,
        'Only its author can read facts from a story.',
      );
    }
    if (story.status !== StoryStatus.READY) {
      throw new StoryException(
        StoryErrorCode.NOT_READY,
        `The story is ${story.status.toLowerCase()}: facts can be read once it is READY.`,
      );
    }
    await this.rateLimits.assertModelBudget(user.id);
    const payload = { storyId: story.id, shareLikeStory };
    let done = { passagesRead: 0, factsFound: 0 };
    try {
      // A few model calls while the caller waits; a long story goes on in the background.
      done = await this.facts.extract(payload, { maxCalls: INLINE_EXTRACT_CALLS });
    } catch (err) {
      if (!(err instanceof JobDeferred) && !isModelError(err)) throw err;
    }
    // What was read stays; the rest continues in the background (when the model is back).
    const remaining = await this.facts.remaining(story.id);
    if (remaining > 0) await this.jobs.enqueue(STORY_EXTRACT_JOB, story.id, { ...payload });
    return { story, ...done, remaining };
  }

  /** Pages of a story the viewer may see. */
  async pages(user: UserEntity, id: string, from: number, count: number): Promise<StoryPage[]> {
    const story = await this.get(user, id);
    return this.repo.pageRange(story.id, from, count);
  }
}
