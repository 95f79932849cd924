import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { AppConfig } from '../config/app-config.js';
import type { RequestContext } from '../graphql/request-context.js';
import { boundToSession, filterMap, SubscriptionEnded } from '../graphql/session-bound.js';
import type { UserEntity } from '../identity/user.entity.js';
import { UsersService } from '../identity/users.service.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { JobContext, JobsService } from '../jobs/jobs.service.js';
import { ConversationLimitsService } from '../conversations/conversation-limits.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { QuotasService } from '../quotas/quotas.service.js';
import { ArchiveExportService, EXPORT_STAGES } from './archive-export.service.js';
import { ArchiveImportService } from './archive-import.service.js';
import { ArchiveReader } from './archive-reader.js';
import { detailOf, deterministicFailure } from './archive-failure.js';
import { checkUpload, readerLimits, uploadLimits } from './archive-upload-checks.js';
import { ArchiveStore } from './archive-store.js';
import { LegacyArchiveEntity } from './archive.entity.js';
import { ArchiveKind, ArchiveStatus } from './archive.enums.js';
import { ArchiveErrorCode, ArchiveException } from './archive.exception.js';
import { ArchiveRepository } from './archive.repository.js';

export const ARCHIVE_EXPORT_JOB = 'archives:export';
export const ARCHIVE_IMPORT_JOB = 'archives:import';
/** The job lane archives run in, beside (never in) the default one. */
export const ARCHIVE_LANE = 'archives';
const DAY_MS = 24 * 60 * 60 * 1000;
/** An export or import's progress event, on its own topic: its requester's alone. */
export const archiveTopic = (id: string) => `archive:${id}:progress`;

export interface ArchiveEvent {
  id: string;
  userId: string;
}

const FINISHED = new Set([ArchiveStatus.COMPLETED, ArchiveStatus.FAILED, ArchiveStatus.EXPIRED]);

/**
 * Legacy archives: asking for an export (a job writes it, with progress), downloading it,
 * uploading an archive and importing it as a new legacy (a job, with progress), and deleting
 * them after ARCHIVE_KEEP. An archive is its requester's alone: anyone else is told it does not
 * exist. An export is readable only while its requester is still a member of its legacy.
 */
@Injectable()
export class ArchivesService {
  private readonly logger = new Logger('Archives');

  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: ArchiveRepository,
    private readonly store: ArchiveStore,
    private readonly exporter: ArchiveExportService,
    private readonly importer: ArchiveImportService,
    private readonly legacies: LegaciesService,
    private readonly legacyRepo: LegacyRepository,
    private readonly users: UsersService,
    private readonly jobs: JobsService,
    private readonly quotas: QuotasService,
    private readonly conversationLimits: ConversationLimitsService,
    private readonly bus: EventBus,
    private readonly config: AppConfig,
  ) {}

  private expiry(): Date {
    return new Date(Date.now() + this.config.env.ARCHIVE_KEEP);
  }

  private countArchive(m: Parameters<QuotasService['consume']>[0], user: UserEntity) {
    const limit = this.config.env.ARCHIVES_PER_DAY;
    return this.quotas.consume(m, {
      scope: 'archives',
      subjectId: user.id,
      limit,
      windowMs: DAY_MS,
      message: `You can ask for or upload ${limit} archives a day; try again later.`,
    });
  }

  /** exportLegacyArchive: a member asks for their archive; one already on its way is answered. */
  async requestExport(user: UserEntity, legacyId: string): Promise<LegacyArchiveEntity> {
    await this.legacies.requireMember(user.id, legacyId);
    const archive = await this.dataSource.transaction(async (m) => {
      await this.quotas.serialize(m, `archives:export:${user.id}:${legacyId}`);
      const pending = await this.repo.pendingExport(m, user.id, legacyId);
      if (pending) return pending;
      await this.countArchive(m, user);
      const row = await this.repo.insert(m, {
        kind: ArchiveKind.EXPORT,
        userId: user.id,
        legacyId,
        status: ArchiveStatus.QUEUED,
        expiresAt: this.expiry(),
        total: EXPORT_STAGES.length,
      });
      await this.jobs.enqueue(ARCHIVE_EXPORT_JOB, row.id, { archiveId: row.id }, { manager: m });
      return row;
    });
    this.jobs.nudge();
    return archive;
  }

  /**
   * The caller's archive; NOT_FOUND for anyone else's, and for an export of a legacy they are
   * no longer a member of.
   */
  async get(user: UserEntity, id: string): Promise<LegacyArchiveEntity> {
    const archive = await this.repo.findById(id);
    if (!archive || archive.userId !== user.id) throw ArchiveException.notFound();
    if (archive.kind === ArchiveKind.EXPORT) {
      // Its legacy deleted, or the caller no longer a member of it: theirs no more.
      if (!archive.legacyId) throw ArchiveException.notFound();
      await this.legacies.requireMemberOr(user.id, archive.legacyId, ArchiveException.notFound);
    }
    return archive;
  }

  async list(
    user: UserEntity,
    filter: { legacyId?: string | null; kind?: ArchiveKind | null },
    args: { first?: number; after?: string },
  ): Promise<Connection<LegacyArchiveEntity>> {
    if (filter.legacyId) await this.legacies.requireMember(user.id, filter.legacyId);
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [createdAt, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { createdAt, id };
        })()
      : null;
    const rows = await this.repo.page(user.id, filter, request.limit + 1, after);
    // Exports of legacies the caller has left are theirs no more.
    const exported = rows.flatMap((r) =>
      r.kind === ArchiveKind.EXPORT && r.legacyId ? [r.legacyId] : [],
    );
    const memberOf = await this.legacies.memberOf(user.id, [...new Set(exported)]);
    const visible = rows.filter(
      (r) => r.kind !== ArchiveKind.EXPORT || (r.legacyId !== null && memberOf.has(r.legacyId)),
    );
    return toConnection(visible, request, (r) => encodeCursor([r.createdAt.toISOString(), r.id]));
  }

  /** The ZIP of a finished export, for its requester. */
  async download(
    user: UserEntity,
    id: string,
  ): Promise<{ archive: LegacyArchiveEntity; stream: Readable }> {
    const archive = await this.get(user, id);
    if (archive.kind !== ArchiveKind.EXPORT || archive.status !== ArchiveStatus.COMPLETED) {
      throw new ArchiveException(
        ArchiveErrorCode.NOT_READY,
        archive.status === ArchiveStatus.EXPIRED
          ? 'This archive was deleted after ARCHIVE_KEEP; ask for a new one.'
          : 'This archive is not ready to download.',
      );
    }
    return { archive, stream: this.store.open(archive.id, archive.storedIn!) };
  }

  // ---- import --------------------------------------------------------------------------

  /**
   * An uploaded archive (a file in the scratch directory): checked whole, then kept in the
   * store for importLegacyArchive. A file that is not an archive this Keepsake reads is refused
   * with the reason, and nothing is kept.
   */
  async upload(user: UserEntity, path: string, originalName: string): Promise<LegacyArchiveEntity> {
    try {
      const reader = await ArchiveReader.open(path, readerLimits(this.config.env));
      const manifest = reader.manifest;
      const storyBytes = reader.storyBytes;
      try {
        await checkUpload(reader, uploadLimits(this.config.env));
      } finally {
        reader.close();
      }
      if (storyBytes > this.config.env.MEMBER_STORAGE_MAX_BYTES) {
        throw new ArchiveException(
          ArchiveErrorCode.STORAGE_FULL,
          `The archive's stories and documents take ${storyBytes} bytes; a member keeps at most ${this.config.env.MEMBER_STORAGE_MAX_BYTES} in a legacy (MEMBER_STORAGE_MAX_BYTES).`,
          'file',
        );
      }
      const total = Object.values(manifest.parts).reduce((n, p) => n + p.count, 0);
      const archive = await this.dataSource.transaction(async (m) => {
        await this.countArchive(m, user);
        return this.repo.insert(m, {
          kind: ArchiveKind.IMPORT,
          userId: user.id,
          legacyId: null,
          status: ArchiveStatus.UPLOADED,
          expiresAt: this.expiry(),
          fileName: originalName.slice(0, 300) || 'archive.zip',
          manifest: manifest as unknown as Record<string, unknown>,
          total,
        });
      });
      try {
        const stored = await this.store.put(archive.id, path);
        await this.repo.setStatus(undefined, archive.id, ArchiveStatus.UPLOADED, {
          ...stored,
          counts: countsOf(archive),
        });
      } catch (err) {
        await this.dataSource.query('DELETE FROM legacy_archives WHERE id = $1', [archive.id]);
        throw err;
      }
      return (await this.repo.findById(archive.id))!;
    } finally {
      await rm(path, { force: true });
    }
  }

  /**
   * importLegacyArchive: the uploader starts the import of what they uploaded, if their day
   * has room for its conversations (each is counted as it is made, as startConversation's).
   */
  async requestImport(user: UserEntity, id: string): Promise<LegacyArchiveEntity> {
    const archive = await this.get(user, id);
    if (archive.kind !== ArchiveKind.IMPORT) throw ArchiveException.notFound();
    const conversations = countsOf(archive).conversations ?? 0;
    const started = await this.dataSource.transaction(async (m) => {
      const locked = (await this.repo.lock(m, id))!;
      if (locked.status === ArchiveStatus.EXPIRED) {
        throw new ArchiveException(
          ArchiveErrorCode.NOT_READY,
          'This upload was deleted after ARCHIVE_KEEP; upload the archive again.',
          'id',
        );
      }
      if (locked.status !== ArchiveStatus.UPLOADED) {
        throw new ArchiveException(
          ArchiveErrorCode.ALREADY_IMPORTED,
          'This archive is imported already, or being imported.',
          'id',
        );
      }
      await this.conversationLimits.assertRoomForConversations(m, user, conversations);
      await this.repo.setStatus(m, id, ArchiveStatus.QUEUED, { stage: null });
      await this.jobs.enqueue(
        ARCHIVE_IMPORT_JOB,
        id,
        { archiveId: id },
        { manager: m, dedupe: 'once' },
      );
      return locked;
    });
    this.jobs.nudge();
    await this.publish(started);
    return (await this.repo.findById(id))!;
  }

  // ---- jobs ------------------------------------------------------------------------------

  /** The export job: writes the archive, puts it in the store. Run again, it starts over. */
  async runExport(archiveId: string): Promise<void> {
    const archive = await this.repo.findById(archiveId);
    if (!archive || FINISHED.has(archive.status)) return;
    const [user] = await this.users.findByIds([archive.userId]);
    if (
      !user ||
      !archive.legacyId ||
      !(await this.legacies.findForMember(user.id, archive.legacyId))
    ) {
      await this.fail(archive, 'NOT_A_MEMBER', 'You are no longer a member of this legacy.');
      return;
    }
    await this.repo.setStatus(undefined, archive.id, ArchiveStatus.RUNNING, { stage: 'facts' });
    await this.publish(archive);
    try {
      const written = await this.exporter.write(user, archive.id, archive.legacyId!, async (p) => {
        await this.repo.setProgress(undefined, archive.id, {
          stage: p.stage,
          done: EXPORT_STAGES.indexOf(p.stage),
          counts: p.counts,
        });
        await this.publish(archive);
      });
      await this.repo.setProgress(undefined, archive.id, {
        stage: 'storing',
        done: EXPORT_STAGES.indexOf('storing'),
      });
      await this.publish(archive);
      const stored = await this.store.put(archive.id, written.path);
      await this.repo.setStatus(undefined, archive.id, ArchiveStatus.COMPLETED, {
        ...stored,
        fileName: written.fileName,
        counts: written.counts,
        stage: null,
        finished: true,
        expiresAt: this.expiry(),
      });
      await this.repo.setProgress(undefined, archive.id, { done: EXPORT_STAGES.length });
    } catch (err) {
      if (err instanceof DomainException && err.publicCode === PublicErrorCode.NOT_FOUND) {
        await this.fail(archive, 'NOT_A_MEMBER', 'You are no longer a member of this legacy.');
        return;
      }
      throw err;
    }
    await this.publish(archive);
  }

  /**
   * The import job: makes the legacy once, then imports each part from where the last run
   * stopped, giving way every ARCHIVE_IMPORT_SLICE_MS to an archive job waiting for its lane
   * (it goes on from its cursor when its turn comes again). What would fail on every try (the
   * archive's content, a limit of the importer's) fails it at once, in Keepsake's own words
   * (archive-failure.ts), and the legacy it had begun is deleted; what may pass (the database
   * busy or away) is retried from the cursor.
   */
  async runImport(archiveId: string, job?: JobContext): Promise<void> {
    const archive = await this.repo.findById(archiveId);
    if (!archive || FINISHED.has(archive.status) || archive.status === ArchiveStatus.UPLOADED) {
      return;
    }
    const [user] = await this.users.findByIds([archive.userId]);
    if (!user) return;
    const local = await this.store.local(archive.id, archive.storedIn!);
    let reader: ArchiveReader | null = null;
    try {
      reader = await ArchiveReader.open(local.path, readerLimits(this.config.env));
      await this.repo.setStatus(undefined, archive.id, ArchiveStatus.RUNNING);
      await this.publish(archive);
      const legacyId = await this.importer.legacyFor(archive, user, reader);
      const current = (await this.repo.findById(archive.id))!;
      let last = 0;
      const slice = this.config.env.ARCHIVE_IMPORT_SLICE_MS;
      let sliceEnds = Date.now() + slice;
      await this.importer.run(current, user, legacyId, reader, async () => {
        // A batch is committed with its cursor: a good moment to give way to another archive.
        if (job && Date.now() >= sliceEnds) {
          if (await job.othersWaiting()) throw new JobDeferred(0, 'gave way to another archive');
          sliceEnds = Date.now() + slice;
        }
        if (Date.now() - last < 500) return;
        last = Date.now();
        await this.publish(archive);
      });
      reader.close();
      reader = null;
      await this.repo.setStatus(undefined, archive.id, ArchiveStatus.COMPLETED, {
        stage: null,
        finished: true,
      });
      await this.store.delete(archive.id, archive.storedIn);
      await this.publish(archive);
    } catch (err) {
      // The archive's content, or a limit of the importer's: it would fail again, so it fails now.
      const failure = deterministicFailure(err);
      if (failure) {
        this.logger.warn({
          msg: 'import failed',
          archiveId,
          code: failure.code,
          detail: detailOf(err),
        });
        await this.failImport(archive.id, failure.code, failure.reason);
        return;
      }
      throw err;
    } finally {
      reader?.close();
      await local.release();
    }
  }

  /** An export whose job ran out of attempts (the disk full, say): said so, not left running. */
  async failExport(archiveId: string, reason: string): Promise<void> {
    const archive = await this.repo.findById(archiveId);
    if (!archive || FINISHED.has(archive.status)) return;
    await this.fail(archive, 'EXPORT_FAILED', reason);
  }

  /** An import that failed for good: its half-made legacy goes, so nothing is left half. */
  async failImport(archiveId: string, code: string, reason: string): Promise<void> {
    const archive = await this.repo.findById(archiveId);
    if (!archive || FINISHED.has(archive.status)) return;
    if (archive.legacyId) await this.legacyRepo.delete(archive.legacyId);
    await this.fail(archive, code, reason);
    await this.store.delete(archive.id, archive.storedIn);
  }

  private async fail(archive: LegacyArchiveEntity, code: string, reason: string): Promise<void> {
    await this.repo.setStatus(undefined, archive.id, ArchiveStatus.FAILED, {
      failure: { code, reason },
      stage: null,
      finished: true,
    });
    this.logger.warn({ msg: 'archive failed', archiveId: archive.id, kind: archive.kind, code });
    await this.publish(archive);
  }

  /** Deletes the archives whose ARCHIVE_KEEP is over (hourly). */
  async expire(now = new Date()): Promise<number> {
    let count = 0;
    for (;;) {
      const due = await this.repo.expired(now, 100);
      if (due.length === 0) return count;
      for (const { id } of due) {
        const archive = await this.repo.findById(id);
        if (!archive) continue;
        await this.store.delete(archive.id, archive.storedIn);
        await this.repo.setStatus(undefined, archive.id, ArchiveStatus.EXPIRED);
        count++;
      }
    }
  }

  // ---- progress --------------------------------------------------------------------------

  private async publish(archive: { id: string; userId: string }): Promise<void> {
    const event: ArchiveEvent = { id: archive.id, userId: archive.userId };
    await this.bus.publishAfterCommit(archiveTopic(archive.id), event, 'archive progress');
  }

  /**
   * legacyArchiveProgress: the archive as it moves, for its requester alone; it ends after the
   * event that finishes it, and when an export's requester leaves its legacy or the token ends.
   */
  async progress(
    user: UserEntity,
    id: string,
    context: RequestContext,
  ): Promise<AsyncIterableIterator<LegacyArchiveEntity | SubscriptionEnded>> {
    const archive = await this.get(user, id);
    let finished = false;
    const events = filterMap(this.bus.subscribe<ArchiveEvent>(archiveTopic(id)), async (event) =>
      event.userId === user.id ? this.repo.findById(event.id) : null,
    );
    const untilFinished: AsyncIterableIterator<LegacyArchiveEntity> = {
      async next() {
        if (finished) {
          await events.return?.();
          return { done: true, value: undefined };
        }
        const next = await events.next();
        if (!next.done && FINISHED.has(next.value.status)) finished = true;
        return next;
      },
      async return() {
        await events.return?.();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return boundToSession(this.bus, context, untilFinished, {
      check: () => this.get(user, id),
      revokedBy:
        archive.kind === ArchiveKind.EXPORT ? [topics.legacyAccessRevoked(archive.legacyId!)] : [],
    });
  }
}

function countsOf(archive: LegacyArchiveEntity) {
  const parts = (archive.manifest as { parts?: Record<string, { count: number }> } | null)?.parts;
  return parts
    ? {
        facts: parts.facts?.count ?? 0,
        stories: parts.stories?.count ?? 0,
        conversations: parts.conversations?.count ?? 0,
        turns: parts.turns?.count ?? 0,
        memories: parts.memories?.count ?? 0,
        periodSummaries: parts.periodSummaries?.count ?? 0,
      }
    : {};
}
