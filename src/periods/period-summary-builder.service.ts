import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConversationsService } from '../conversations/conversations.service.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { UsersService } from '../identity/users.service.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { deferForOutage } from '../llm/model-outage.js';
import { LANGUAGE_MODEL } from '../llm/language-model.js';
import type { LanguageModel, PeriodSource, SummaryPeriodName } from '../llm/language-model.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import type { ConversationChunkEntity } from '../summaries/conversation-chunk.entity.js';
import {
  ChunkTurn,
  ConversationChunkRepository,
} from '../summaries/conversation-chunk.repository.js';
import {
  LocalDay,
  addDays,
  childPeriod,
  dayStartsAt,
  daysBetween,
  isDue,
  localDayOf,
  overlapDays,
  periodEndOf,
  periodsTouching,
  zoneOrUtc,
} from './period-calendar.js';
import { PeriodSummaryEntity } from './period-summary.entity.js';
import { PERIOD_KIND, PeriodSummaryRepository } from './period-summary.repository.js';
import { splitNames } from '../llm/heuristics/names.js';

export const PERIOD_JOB = 'periods:summarize';

export interface PeriodJobPayload {
  userId: string;
  legacyId: string;
  period: SummaryPeriodName;
  start: LocalDay;
  /** Asked for by the member: rebuilt even when unchanged or deleted. */
  force?: boolean;
}

export type BuildOutcome = 'STORED' | 'UNCHANGED' | 'EMPTY' | 'SKIPPED';

export interface BuildResult {
  outcome: BuildOutcome;
  summary: PeriodSummaryEntity | null;
}

/** Published on the member's topic when one of their period summaries is stored. */
export interface PeriodSummaryEvent {
  id: string;
  userId: string;
  legacyId: string;
}

/** The key of a period's job: the scheduler, backfills and rebuilds coalesce on it. */
export function periodJobKey(p: Omit<PeriodJobPayload, 'force'>): string {
  return `${p.userId}:${p.legacyId}:${p.period}:${p.start}`;
}

const TURNS_TEXT_CHARS = 6000;
/** Turns the rolling summaries have not reached yet that a week reads: at most this many. */
const WEEK_TURNS_LIMIT = 400;
/** The row changed between reading the sources and writing: read them again. */
class BuildConflict extends Error {}

const MAX_ATTEMPTS = 3;

/**
 * Builds one period summary. A week reads its conversation summaries and the turns they do not
 * cover yet; a month reads the weeks that touch it (each by its share of days), a year its
 * months, building any that are due and missing first. What it was built from is fingerprinted,
 * so building again with nothing new changes nothing. The write checks, under the row's lock,
 * that nothing changed the period while its sources were read and the model ran (a deletion by
 * the member, a conversation deleted, another build): then it reads again instead.
 */
@Injectable()
export class PeriodSummaryBuilderService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: PeriodSummaryRepository,
    private readonly chunks: ConversationChunkRepository,
    private readonly conversations: ConversationsService,
    private readonly users: UsersService,
    private readonly legacies: LegaciesService,
    private readonly embeddings: EmbeddingService,
    private readonly bus: EventBus,
    private readonly limits: RateLimitService,
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
  ) {}

  /** The job: rebuild the period if the member is still in the legacy. */
  async runJob(payload: PeriodJobPayload, now = new Date()): Promise<void> {
    const [user] = await this.users.findByIds([payload.userId]);
    const legacy = user ? await this.legacies.findForMember(user.id, payload.legacyId) : null;
    if (!user || !legacy) {
      // A member who left cannot rebuild; what was built from a deleted conversation goes.
      const row = user
        ? await this.repo.find(user.id, payload.legacyId, payload.period, payload.start)
        : null;
      await this.dataSource.transaction(async (m) => {
        if (row?.stale) await this.repo.deleteEmpty(m, row.id);
        await this.repo.completeBackfillItems(
          payload.userId,
          payload.legacyId,
          payload.period,
          payload.start,
          'SKIPPED',
          m,
        );
      });
      return;
    }
    try {
      await this.build(
        { id: user.id, timezone: user.timezone },
        { id: legacy.id, name: legacy.name },
        payload.period,
        payload.start,
        { force: payload.force === true, now },
      );
    } catch (err) {
      throw deferForOutage(err, 60_000) ?? err;
    }
  }

  async build(
    user: { id: string; timezone: string },
    legacy: { id: string; name: string },
    period: SummaryPeriodName,
    start: LocalDay,
    options: { force: boolean; now: Date },
  ): Promise<BuildResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(user, legacy, period, start, options);
      } catch (err) {
        if (!(err instanceof BuildConflict) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  private async attempt(
    user: { id: string; timezone: string },
    legacy: { id: string; name: string },
    period: SummaryPeriodName,
    start: LocalDay,
    options: { force: boolean; now: Date },
  ): Promise<BuildResult> {
    const zone = zoneOrUtc(user.timezone);
    const end = periodEndOf(period, start);
    const key = { userId: user.id, legacyId: legacy.id, period, start };
    const existing = await this.repo.find(user.id, legacy.id, period, start);
    const seen = existing?.updatedAt.getTime() ?? null;
    if (existing?.deletedAt && !options.force) {
      await this.repo.completeBackfillItems(user.id, legacy.id, period, start, 'SKIPPED');
      return { outcome: 'SKIPPED', summary: null };
    }
    const startsAt = dayStartsAt(start, zone);
    const endsAt = dayStartsAt(addDays(end, 1), zone);
    const coverage = await this.conversations.coverage(user.id, legacy.id, startsAt, endsAt);
    const sources =
      coverage.turnCount === 0
        ? []
        : period === 'WEEK'
          ? await this.weekSources(user.id, legacy.id, startsAt, endsAt, zone)
          : await this.childSources(user, legacy, period, start, end, options.now);
    if (sources.length === 0) {
      await this.dataSource.transaction(async (m) => {
        const current = await this.repo.find(user.id, legacy.id, period, start, m);
        if ((current?.updatedAt.getTime() ?? null) !== seen) throw new BuildConflict();
        if (current && !current.deletedAt) await this.repo.deleteEmpty(m, current.id);
        await this.repo.completeBackfillItems(user.id, legacy.id, period, start, 'EMPTY', m);
      });
      return { outcome: 'EMPTY', summary: null };
    }
    // A month or year also answers for what its weeks or months were built from.
    const conversationIds = [
      ...new Set([...coverage.conversationIds, ...sources.flatMap((s) => s.conversationIds)]),
    ].sort();
    const fingerprint = createHash('sha256')
      .update(
        JSON.stringify([
          zone,
          this.llm.modelId,
          coverage,
          sources.map((s) => [s.kind, s.id, s.from, s.to, s.weight, s.text]),
        ]),
      )
      .digest('hex');
    if (
      existing &&
      !existing.deletedAt &&
      !existing.stale &&
      !options.force &&
      existing.sourceFingerprint === fingerprint
    ) {
      await this.repo.completeBackfillItems(user.id, legacy.id, period, start, 'STORED');
      return { outcome: 'UNCHANGED', summary: existing };
    }

    const wait = await this.limits.backgroundModelCall(user.id);
    if (wait > 0) throw new JobDeferred(wait, 'model call budget spent');
    const text = await this.llm.summarizePeriod({
      legacyName: legacy.name,
      period,
      start,
      end,
      sources,
      conversationCount: coverage.conversationIds.length,
      turnCount: coverage.turnCount,
    });
    const vectors = await this.embeddings.embedForStorage([text.summary]);
    const stored = await this.dataSource.transaction(async (m) => {
      await this.repo.lockKey(m, periodJobKey(key));
      const current = await this.repo.find(user.id, legacy.id, period, start, m);
      if ((current?.updatedAt.getTime() ?? null) !== seen) throw new BuildConflict();
      // A conversation deleted meanwhile: its deletion waits for this transaction, or is seen.
      const alive = await this.conversations.lockExisting(m, conversationIds);
      if (alive.size !== conversationIds.length) throw new BuildConflict();
      const row = await this.repo.upsert(m, {
        userId: user.id,
        legacyId: legacy.id,
        period,
        start,
        end,
        timeZone: zone,
        startsAt,
        endsAt,
        summary: text.summary,
        emotionalTone: text.emotionalTone,
        keyThemes: text.keyThemes,
        recurringPatterns: text.recurringPatterns,
        people: text.people,
        places: text.places,
        conversationCount: coverage.conversationIds.length,
        turnCount: coverage.turnCount,
        sourceChunkIds: sources.flatMap((s) => (s.kind === 'CHUNK' ? [s.id] : [])),
        sourcePeriodIds: sources.flatMap((s) =>
          s.kind === 'WEEK' || s.kind === 'MONTH' ? [s.id] : [],
        ),
        conversationIds,
        sourceFingerprint: fingerprint,
        aggregated: !this.llm.generates,
        model: text.call.model,
        promptVersion: text.call.promptVersion ?? null,
      });
      await this.embeddings.store(
        PERIOD_KIND,
        [{ id: row.id, legacyId: row.legacyId, userId: row.userId }],
        vectors,
        m,
      );
      await this.repo.completeBackfillItems(user.id, legacy.id, period, start, 'STORED', m);
      return row;
    });
    const event: PeriodSummaryEvent = { id: stored.id, userId: user.id, legacyId: legacy.id };
    await this.bus.publishAfterCommit(
      topics.memberPeriods(user.id, legacy.id),
      event,
      'period summary event',
    );
    return { outcome: 'STORED', summary: stored };
  }

  private async weekSources(
    userId: string,
    legacyId: string,
    from: Date,
    to: Date,
    zone: string,
  ): Promise<(PeriodSource & { id: string })[]> {
    const [chunks, turns] = await Promise.all([
      this.chunks.chunksBetween(userId, legacyId, from, to),
      this.chunks.unsummarizedBetween(userId, legacyId, from, to, WEEK_TURNS_LIMIT),
    ]);
    return [
      ...chunks.map((c) => this.chunkSource(c, from, to, zone)),
      ...this.turnSources(turns, zone),
    ];
  }

  private chunkSource(
    c: ConversationChunkEntity,
    from: Date,
    to: Date,
    zone: string,
  ): PeriodSource & { id: string } {
    const first = new Date(c.firstOccurredAt).getTime();
    const last = new Date(c.lastOccurredAt).getTime();
    const inside = Math.min(last, to.getTime()) - Math.max(first, from.getTime());
    // A summary whose turns straddle the week's edge counts by the share of its time inside.
    const weight = last > first ? Math.max(0.05, Math.min(1, inside / (last - first))) : 1;
    return {
      id: c.id,
      kind: 'CHUNK',
      from: localDayOf(new Date(first), zone),
      to: localDayOf(new Date(last), zone),
      weight: Math.round(weight * 100) / 100,
      text: c.content,
      userTurns: [],
      themes: [],
      ...splitNames(c.structured?.entities ?? [], c.content),
      emotionalTone: null,
      patterns: [],
      conversationIds: [c.conversationId],
    };
  }

  /** Turns no summary covers yet, one source per conversation. */
  private turnSources(
    turns: (ChunkTurn & { conversationId: string })[],
    zone: string,
  ): (PeriodSource & { id: string })[] {
    const byConversation = new Map<string, (ChunkTurn & { conversationId: string })[]>();
    for (const t of turns) {
      if (!byConversation.has(t.conversationId)) byConversation.set(t.conversationId, []);
      byConversation.get(t.conversationId)!.push(t);
    }
    return [...byConversation.entries()].map(([conversationId, list]) => ({
      id: conversationId,
      kind: 'TURNS' as const,
      from: localDayOf(new Date(list[0].occurredAt), zone),
      to: localDayOf(new Date(list[list.length - 1].occurredAt), zone),
      weight: 1,
      text: list
        .map((t) => `${t.role === 'USER' ? 'User' : 'Assistant'}: ${t.content}`)
        .join('\n')
        .slice(0, TURNS_TEXT_CHARS),
      userTurns: list.filter((t) => t.role === 'USER').map((t) => t.content),
      themes: [],
      people: [],
      places: [],
      emotionalTone: null,
      patterns: [],
      conversationIds: [conversationId],
    }));
  }

  /** A month's weeks or a year's months, each built first if due and missing or out of date. */
  private async childSources(
    user: { id: string; timezone: string },
    legacy: { id: string; name: string },
    period: SummaryPeriodName,
    start: LocalDay,
    end: LocalDay,
    now: Date,
  ): Promise<(PeriodSource & { id: string })[]> {
    const child = childPeriod(period)!;
    const zone = zoneOrUtc(user.timezone);
    const starts = periodsTouching(child, start, end).filter((s) => isDue(child, s, zone, now));
    for (const s of starts) await this.build(user, legacy, child, s, { force: false, now });
    const rows = await this.repo.findStarts(user.id, legacy.id, child, starts);
    return rows.map((r) => ({
      id: r.id,
      kind: child as 'WEEK' | 'MONTH',
      from: r.start,
      to: r.end,
      weight:
        Math.round(
          (overlapDays(r.start, r.end, start, end) / (daysBetween(r.start, r.end) + 1)) * 100,
        ) / 100,
      text: r.summary,
      userTurns: [],
      themes: r.keyThemes,
      people: r.people,
      places: r.places,
      emotionalTone: r.emotionalTone,
      patterns: r.recurringPatterns,
      conversationIds: r.conversationIds,
    }));
  }
}
