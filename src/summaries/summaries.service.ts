import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type { ConversationView } from '../conversations/conversation-access.service.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { chunkWithheldFrom } from '../conversations/withheld-reply.js';
import type { FactEvent } from '../facts/fact-events.service.js';
import { FactWriterService } from '../facts/fact-writer.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { JobsService } from '../jobs/jobs.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { deferForOutage } from '../llm/model-outage.js';
import { ModelOutputError, isModelError } from '../llm/model.errors.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import {
  ChunkWriterService,
  EmbeddingsUnavailable,
  PreparedChunk,
} from './chunk-writer.service.js';
import { ConversationChunkEntity } from './conversation-chunk.entity.js';
import {
  ConversationChunkRepository,
  SetAsideRange,
  SummaryProgress,
} from './conversation-chunk.repository.js';

export const SUMMARIZE_JOB = 'summaries:summarize';
/** A range set aside (summary_set_asides): FAILED from the start, run when an operator retries it. */
export const SET_ASIDE_JOB = 'summaries:set-aside';

/** What summarizeNext answers for a range it set aside. */
export const SET_ASIDE = 'set-aside';

/** Halvings of a range the model fails before it is set aside. */
const SHORTER_SPANS = 1;

export interface SetAsidePayload {
  conversationId: string;
  rangeStart: number;
  rangeEnd: number;
}

/**
 * Batches summarizeNow writes before answering (each is a model call); anything beyond goes on
 * in the background. Below the threshold there are at most two batches' worth of turns.
 */
const SUMMARIZE_NOW_INLINE_BATCHES = 2;

export interface SummarizeJobPayload {
  conversationId: string;
  /** summarizeNow: summarize every unsummarized turn, below the threshold too. */
  force?: boolean;
  /**
   * summarizeNow: the participant who asked, whose budget pays for the rest of the pass (not the
   * starter's: in a together conversation one participant cannot spend another's).
   */
  chargedTo?: string;
}

/** The owner's model budget (MODEL_CALLS_PER_USER_PER_MINUTE) is spent: try again after it. */
export class ModelBudgetSpent extends Error {
  constructor(readonly waitMs: number) {
    super(`model call budget spent: summarization waits ${Math.ceil(waitMs / 1000)} s`);
  }
}

export interface SummarizeNowResult {
  conversation: ConversationView;
  chunks: ConversationChunkEntity[];
  unsummarizedTurns: number;
  /** The model failed: the pass continues in the background when it is back. */
  deferred: boolean;
}

/**
 * Rolling summarization. After each stored turn a job checks the conversation; while more than
 * SUMMARIZATION_THRESHOLD turns are unsummarized, the oldest SUMMARIZATION_BATCH are summarized
 * with one model call into a conversation chunk, written with the facts found in those turns in
 * one transaction. Progress is derived from the chunks themselves (the next range starts after
 * the last one), so a failure stores nothing and the same range is tried again: no turn is ever
 * skipped or summarized twice.
 */
@Injectable()
export class SummariesService {
  private readonly logger = new Logger('Summaries');

  constructor(
    private readonly dataSource: DataSource,
    private readonly chunks: ConversationChunkRepository,
    private readonly conversations: ConversationsService,
    private readonly legacies: LegacyRepository,
    private readonly facts: FactWriterService,
    private readonly writer: ChunkWriterService,
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
    private readonly limits: RateLimitService,
  ) {}

  /** Asks for a check of the conversation; coalesces with a check already waiting. */
  enqueue(
    conversationId: string,
    options: { force?: boolean; chargedTo?: string; manager?: EntityManager; runAt?: Date } = {},
  ): Promise<boolean> {
    const payload: SummarizeJobPayload = {
      conversationId,
      ...(options.force ? { force: true } : {}),
      ...(options.force && options.chargedTo ? { chargedTo: options.chargedTo } : {}),
    };
    return this.jobs.enqueue(
      SUMMARIZE_JOB,
      // A forced pass is coalesced with one its payer asked for, never with another's.
      options.force
        ? `${conversationId}:now${payload.chargedTo ? `:${payload.chargedTo}` : ''}`
        : conversationId,
      payload as unknown as Record<string, unknown>,
      { manager: options.manager, runAt: options.runAt },
    );
  }

  /** The job: summarize while the conversation is over the threshold (or forced), in bounds. */
  async runJob(payload: SummarizeJobPayload): Promise<void> {
    const force = payload.force === true;
    try {
      for (let i = 0; i < this.config.env.SUMMARIZATION_BATCHES_PER_JOB; i++) {
        if (!(await this.summarizeNext(payload.conversationId, force, payload.chargedTo))) return;
      }
    } catch (err) {
      throw this.asJobError(err);
    }
    // A long backlog (an import) continues in a follow-up job, so no job runs for long.
    if (await this.due(payload.conversationId, force)) {
      await this.enqueue(payload.conversationId, { force, chargedTo: payload.chargedTo });
    }
  }

  /** The sweeper: conversations over the threshold that no job is handling get one. */
  async sweep(limit = 1000): Promise<number> {
    const behind = await this.chunks.overThreshold(this.config.env.SUMMARIZATION_THRESHOLD, limit);
    let enqueued = 0;
    for (const { id } of behind) if (await this.enqueue(id)) enqueued++;
    if (enqueued > 0) this.logger.log({ msg: 'summarization sweep', enqueued });
    return enqueued;
  }

  /**
   * summarizeNow: a participant forces a pass below the threshold. Every unsummarized turn is
   * summarized, in batches; a long backlog or a model failure continues in the background.
   */
  async summarizeNow(user: UserEntity, conversationId: string): Promise<SummarizeNowResult> {
    const conversation = await this.conversations.getParticipating(user, conversationId);
    await this.limits.assertModelBudget(user.id);
    const created: ConversationChunkEntity[] = [];
    let deferred = false;
    try {
      for (let i = 0; i < SUMMARIZE_NOW_INLINE_BATCHES; i++) {
        // Inline, the pass is the caller's: in a together conversation another participant's
        // budget is theirs, and whether it is spent is not this caller's to learn.
        const chunk = await this.summarizeNext(conversation.id, true, user.id);
        if (!chunk) break;
        if (chunk !== SET_ASIDE) created.push(chunk);
      }
    } catch (err) {
      if (
        !isModelError(err) &&
        !(err instanceof EmbeddingsUnavailable) &&
        !(err instanceof ModelBudgetSpent)
      ) {
        throw err;
      }
      this.logger.warn({
        msg: 'summarizeNow deferred',
        conversationId,
        error: (err as Error).message,
      });
      deferred = true;
    }
    const unsummarizedTurns = (await this.chunks.pendingTurns([conversation.id])).get(
      conversation.id,
    )!;
    if (unsummarizedTurns > 0 && (deferred || created.length > 0)) {
      const wait = deferred ? this.config.env.SUMMARIZATION_RETRY_MS : 0;
      await this.enqueue(conversation.id, {
        force: true,
        chargedTo: user.id,
        runAt: new Date(Date.now() + wait),
      });
    }
    const current = await this.conversations.getParticipating(user, conversationId);
    // Those made now, but one that covers a reply made for another participant alone.
    const chunks = created.filter((c) => !chunkWithheldFrom(c, user.id));
    return { conversation: current, chunks, unsummarizedTurns, deferred };
  }

  /** Whether the conversation has turns to summarize now. */
  private async due(conversationId: string, force: boolean): Promise<boolean> {
    const progress = await this.chunks.progress(conversationId);
    return progress !== null && this.batchFor(progress, force) !== null;
  }

  /** The next range to summarize, or null when there is none (yet). */
  private batchFor(
    progress: SummaryProgress,
    force: boolean,
  ): { start: number; end: number } | null {
    const pending = progress.turnCount - progress.nextStart;
    if (pending <= 0) return null;
    if (!force && pending <= this.config.env.SUMMARIZATION_THRESHOLD) return null;
    const count = Math.min(this.config.env.SUMMARIZATION_BATCH, pending);
    return { start: progress.nextStart, end: progress.nextStart + count - 1 };
  }

  /**
   * Summarizes the next range of the conversation, if one is due. Returns the chunk written,
   * SET_ASIDE when the model could not summarize it (the range is set aside and the
   * conversation goes on after it), or null when nothing was due or another worker wrote this
   * range first. A model the range fails is asked again on its first half (a shorter span is
   * easier for a small model) before the range is set aside. Model outages and embedding
   * failures propagate, with nothing stored. The model call counts in `chargedTo`'s budget:
   * the conversation's starter's unless a participant asked for it (summarizeNow, inline or in
   * the job that continues it).
   */
  async summarizeNext(
    conversationId: string,
    force: boolean,
    chargedTo?: string,
  ): Promise<ConversationChunkEntity | typeof SET_ASIDE | null> {
    const progress = await this.chunks.progress(conversationId);
    if (!progress) return null;
    let range = this.batchFor(progress, force);
    if (!range) return null;
    const legacy = await this.legacies.findById(progress.legacyId);
    if (!legacy) return null;
    for (let halved = 0; ; halved++) {
      const turns = await this.writer.rangeTurns(conversationId, range);
      // Notices (the offline one, a failed reply's) are covered by the range but never read: a
      // range of notices alone waits for the next turns to be summarized with them.
      if (!turns.some((t) => !t.placeholder)) return null;
      const wait = await this.limits.backgroundModelCall(chargedTo ?? progress.userId);
      if (wait > 0) throw new ModelBudgetSpent(wait);
      let made: PreparedChunk;
      try {
        made = await this.writer.prepareChunk(legacy.name, turns);
      } catch (err) {
        if (!(err instanceof ModelOutputError)) throw err;
        if (halved < SHORTER_SPANS && range.end > range.start) {
          const half = Math.ceil((range.end - range.start + 1) / 2);
          this.logger.warn({
            msg: 'summary refused; trying a shorter span',
            conversationId,
            range,
            error: err.message,
          });
          range = { start: range.start, end: range.start + half - 1 };
          continue;
        }
        return (await this.setAside(conversationId, range, err)) ? SET_ASIDE : null;
      }
      let events: FactEvent[] = [];
      const target = range;
      const chunk = await this.dataSource.transaction(async (m) => {
        await this.chunks.lock(m, conversationId);
        const current = await this.chunks.progress(conversationId, m);
        if (!current || current.nextStart !== target.start) return null;
        const written = await this.writer.writeChunk(m, progress, legacy.name, target, turns, made);
        events = written.events;
        return written.chunk;
      });
      if (chunk) await this.facts.publish(events);
      return chunk;
    }
  }

  /**
   * The job of a set-aside range, run when an operator retries it from failedJobs: the same
   * range, summarized now, fills its place; a model that fails again leaves it set aside and
   * the job failed.
   */
  async summarizeSetAside(payload: SetAsidePayload): Promise<void> {
    const { conversationId, rangeStart, rangeEnd } = payload;
    const progress = await this.chunks.progress(conversationId);
    if (!progress) return;
    const legacy = await this.legacies.findById(progress.legacyId);
    if (!legacy) return;
    const range = { start: rangeStart, end: rangeEnd };
    const turns = await this.writer.rangeTurns(conversationId, range);
    const made = await this.writer.prepareChunk(legacy.name, turns).catch((err: unknown) => {
      throw this.asJobError(err);
    });
    let events: FactEvent[] = [];
    await this.dataSource.transaction(async (m) => {
      await this.chunks.lock(m, conversationId);
      if (!(await this.chunks.setAsideForUpdate(m, conversationId, rangeStart))) return;
      const written = await this.writer.writeChunk(m, progress, legacy.name, range, turns, made);
      await this.chunks.clearSetAside(m, conversationId, rangeStart);
      events = written.events;
    });
    await this.facts.publish(events);
  }

  /**
   * Sets a range aside, with a FAILED job an operator sees in failedJobs and can retry, in one
   * transaction, unless the conversation moved on meanwhile. The next pass starts after it.
   */
  private async setAside(
    conversationId: string,
    range: { start: number; end: number },
    err: ModelOutputError,
  ): Promise<boolean> {
    const error = `${err.message}`.slice(0, 2000);
    const done = await this.dataSource.transaction(async (m) => {
      await this.chunks.lock(m, conversationId);
      const current = await this.chunks.progress(conversationId, m);
      if (!current || current.nextStart !== range.start) return false;
      await this.chunks.setAside(m, {
        conversationId,
        rangeStart: range.start,
        rangeEnd: range.end,
        error,
      });
      const payload: SetAsidePayload = {
        conversationId,
        rangeStart: range.start,
        rangeEnd: range.end,
      };
      await this.jobs.recordFailed(
        SET_ASIDE_JOB,
        `${conversationId}:${range.start}`,
        { ...payload },
        `turns ${range.start}-${range.end} set aside: ${error}`,
        { manager: m },
      );
      return true;
    });
    if (done) {
      this.logger.warn({ msg: 'summary range set aside', conversationId, range, error });
    }
    return done;
  }

  /** Outages wait without spending attempts; invalid output is retried with backoff. */
  private asJobError(err: unknown): unknown {
    const wait = this.config.env.SUMMARIZATION_RETRY_MS;
    if (err instanceof EmbeddingsUnavailable) return new JobDeferred(wait, err.message);
    if (err instanceof ModelBudgetSpent) return new JobDeferred(err.waitMs, err.message);
    return deferForOutage(err, wait) ?? err;
  }

  // ---- reads ------------------------------------------------------------------------------

  /** Summaries of the conversations, but those withheld from the viewer (withheld-reply.ts). */
  async chunksOf(
    conversationIds: readonly string[],
    viewerId: string,
  ): Promise<ConversationChunkEntity[]> {
    const chunks = await this.chunks.forConversations(conversationIds);
    return chunks.filter((c) => !chunkWithheldFrom(c, viewerId));
  }

  pendingTurns(conversationIds: readonly string[]): Promise<Map<string, number>> {
    return this.chunks.pendingTurns(conversationIds);
  }

  /** The conversation's ranges set aside, waiting for an operator's retry. */
  setAsides(conversationId: string): Promise<SetAsideRange[]> {
    return this.chunks.setAsides(conversationId);
  }

  /** Chunks by id, for retrieval by other modules; they scope them to the viewer. */
  findChunksByIds(ids: readonly string[]): Promise<ConversationChunkEntity[]> {
    return this.chunks.findByIds(ids);
  }
}
