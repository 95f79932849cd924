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
import type { UserEntity } from '../identity/user.entity.js';
import { JobsService } from '../jobs/jobs.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { SUMMARY_PERIODS } from '../llm/language-model.js';
import type { SummaryPeriodName } from '../llm/language-model.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { parseTimeExpression } from '../search/time-expressions.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { isModelError } from '../llm/model.errors.js';
import {
  daysBetween,
  dueDay,
  isDue,
  isLocalDay,
  isPeriodStart,
  localDayOf,
  periodsTouching,
  zoneOrUtc,
} from './period-calendar.js';
import {
  BuildResult,
  PERIOD_JOB,
  PeriodJobPayload,
  PeriodSummaryBuilderService,
  PeriodSummaryEvent,
  periodJobKey,
} from './period-summary-builder.service.js';
import { filterMap } from '../graphql/session-bound.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { PeriodSummaryEntity } from './period-summary.entity.js';
import { PeriodSummaryErrorCode, PeriodSummaryException } from './period-summary.exception.js';
import {
  BackfillProgressRow,
  PeriodSummaryFields,
  PeriodSummaryRepository,
} from './period-summary.repository.js';

const DAY_MS = 86_400_000;

export interface YearSide {
  year: number;
  emotionalTone: string | null;
  conversationCount: number;
  turnCount: number;
  themes: string[];
  people: string[];
  places: string[];
  summaries: PeriodSummaryEntity[];
}

export interface YearComparison {
  year: number;
  otherYear: number;
  month: number | null;
  text: string;
  current: YearSide;
  other: YearSide;
  sharedThemes: string[];
  newThemes: string[];
  fadedThemes: string[];
}

/** A period summary that fits a time a question names, and how well (0..1). */
export interface PeriodMatch {
  summary: PeriodSummaryEntity;
  fit: number;
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function unique(list: string[]): string[] {
  const seen = new Set<string>();
  return list.filter((x) => {
    const key = x.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The member's period summaries: reading, asking for one, backfilling a range, deleting, and
 * comparing years. Every path is the member's own data in a legacy they belong to.
 */
@Injectable()
export class PeriodSummariesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: PeriodSummaryRepository,
    private readonly builder: PeriodSummaryBuilderService,
    private readonly legacies: LegaciesService,
    private readonly jobs: JobsService,
    private readonly limits: RateLimitService,
    private readonly bus: EventBus,
    private readonly config: AppConfig,
  ) {}

  /**
   * Summaries brought in by a legacy archive's import, inside its transaction: the importer's,
   * as the archive holds them, with the conversations they were built from pointing at the
   * imported ones. Built from conversations that came in with them, they are left as they are
   * (no fingerprint to compare: only summarizePeriod rebuilds one); their vectors come from the
   * embedding sweeper, or from the importer's own embedding right after.
   */
  async importArchived(
    manager: EntityManager,
    userId: string,
    legacyId: string,
    rows: Omit<
      PeriodSummaryFields,
      'userId' | 'legacyId' | 'sourceChunkIds' | 'sourcePeriodIds' | 'sourceFingerprint'
    >[],
  ): Promise<PeriodSummaryEntity[]> {
    const stored: PeriodSummaryEntity[] = [];
    for (const row of rows) {
      stored.push(
        await this.repo.upsert(manager, {
          ...row,
          userId,
          legacyId,
          sourceChunkIds: [],
          sourcePeriodIds: [],
          sourceFingerprint: '',
        }),
      );
    }
    return stored;
  }

  async list(
    user: UserEntity,
    legacyId: string,
    period: SummaryPeriodName | null,
    args: { first?: number; after?: string },
  ): Promise<Connection<PeriodSummaryEntity>> {
    await this.legacies.requireMember(user.id, legacyId);
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [start, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { start, id };
        })()
      : null;
    const rows = await this.repo.page(user.id, legacyId, period, request.limit + 1, after);
    return toConnection(rows, request, (r) => encodeCursor([r.start, r.id]));
  }

  /** One of the viewer's own summaries, in a legacy they still belong to; NOT_FOUND otherwise. */
  async get(user: UserEntity, id: string): Promise<PeriodSummaryEntity> {
    const row = await this.repo.findById(id);
    if (!row || row.userId !== user.id) throw PeriodSummaryException.notFound();
    await this.legacies.requireMemberOr(user.id, row.legacyId, PeriodSummaryException.notFound);
    return row;
  }

  /**
   * summarizePeriod: (re)builds one ended period now, even one the member deleted. When the
   * model is unavailable or the member's model budget runs out on the way (a year may first
   * need its months and weeks), what was built stays and the rest is queued: QUEUED, and the
   * summary arrives on periodSummaryAdded.
   */
  async summarizePeriod(
    user: UserEntity,
    input: { legacyId: string; period: SummaryPeriodName; start: string },
    now = new Date(),
  ): Promise<BuildResult | { outcome: 'QUEUED'; summary: null }> {
    await this.legacies.requireMember(user.id, input.legacyId);
    this.checkStart(input.period, input.start);
    const zone = zoneOrUtc(user.timezone);
    if (!isDue(input.period, input.start, zone, now)) {
      throw new PeriodSummaryException(
        PeriodSummaryErrorCode.PERIOD_NOT_ENDED,
        `This ${input.period.toLowerCase()} can be summarized from ${dueDay(input.period, input.start)} (${zone}), once every week it touches has ended.`,
        'start',
      );
    }
    await this.limits.assertModelBudget(user.id);
    const legacy = (await this.legacies.get(user, input.legacyId)).legacy;
    try {
      return await this.builder.build(
        { id: user.id, timezone: user.timezone },
        { id: legacy.id, name: legacy.name },
        input.period,
        input.start,
        { force: true, now },
      );
    } catch (err) {
      if (!(err instanceof JobDeferred) && !isModelError(err)) throw err;
      await this.jobs.enqueue(
        PERIOD_JOB,
        `${periodJobKey({ userId: user.id, ...input })}:asked`,
        { userId: user.id, ...input, force: true },
        { runAt: new Date(Date.now() + (err instanceof JobDeferred ? err.delayMs : 0)) },
      );
      return { outcome: 'QUEUED', summary: null };
    }
  }

  /** Queues every ended period of the range (weeks, months, years) the member has not deleted. */
  async backfill(
    user: UserEntity,
    input: { legacyId: string; from: string; to: string },
    now = new Date(),
  ): Promise<BackfillProgressRow> {
    await this.legacies.requireMember(user.id, input.legacyId);
    for (const field of ['from', 'to'] as const) {
      if (!isLocalDay(input[field])) {
        throw new PeriodSummaryException(
          PeriodSummaryErrorCode.INVALID_RANGE,
          `${input[field]} is not a calendar date (YYYY-MM-DD).`,
          field,
        );
      }
    }
    if (input.from > input.to) {
      throw new PeriodSummaryException(
        PeriodSummaryErrorCode.INVALID_RANGE,
        '`from` must not be after `to`.',
        'from',
      );
    }
    const zone = zoneOrUtc(user.timezone);
    const today = localDayOf(now, zone);
    const to = input.to < today ? input.to : today;
    const max = this.config.env.PERIOD_BACKFILL_MAX_PERIODS;
    // Weeks alone outnumber the cap long before the loop below would: refuse before it.
    const days = Math.max(0, daysBetween(input.from, to) + 1);
    if (Math.ceil(days / 7) > max) {
      throw new PeriodSummaryException(
        PeriodSummaryErrorCode.INVALID_RANGE,
        `The range holds more than ${max} periods; queue at most ${max} at once.`,
        'to',
      );
    }
    // Every ended period but those the member deleted: an up-to-date one costs its fingerprint.
    const deleted = await this.repo.deletedKeys(user.id, input.legacyId);
    const items: { period: SummaryPeriodName; start: string }[] = [];
    for (const period of SUMMARY_PERIODS) {
      for (const start of periodsTouching(period, input.from, to)) {
        if (!isDue(period, start, zone, now) || deleted.has(`${period}:${start}`)) continue;
        items.push({ period, start });
      }
    }
    if (items.length > max) {
      throw new PeriodSummaryException(
        PeriodSummaryErrorCode.INVALID_RANGE,
        `The range holds ${items.length} periods to summarize; at most ${max} can be queued at once.`,
        'to',
      );
    }
    const id = await this.dataSource.transaction(async (m) => {
      const backfillId = await this.repo.createBackfill(
        m,
        user.id,
        input.legacyId,
        input.from,
        input.to,
        items,
      );
      for (const item of items) {
        await this.enqueue(m, { userId: user.id, legacyId: input.legacyId, ...item });
      }
      return backfillId;
    });
    this.jobs.nudge();
    return (await this.repo.backfillProgress(id, user.id))!;
  }

  async progress(user: UserEntity, id: string): Promise<BackfillProgressRow> {
    const row = await this.repo.backfillProgress(id, user.id);
    const notFound = () =>
      new PeriodSummaryException(PeriodSummaryErrorCode.BACKFILL_NOT_FOUND, 'Backfill not found.');
    if (!row) throw notFound();
    await this.legacies.requireMemberOr(user.id, row.legacyId, notFound);
    return row;
  }

  /** Deleted now (content and vector); not rebuilt unless the member asks with summarizePeriod. */
  async delete(user: UserEntity, id: string): Promise<void> {
    const row = await this.get(user, id);
    await this.dataSource.transaction((m) => this.repo.tombstone(m, row.id));
  }

  /** In the deletion's transaction: what was built from the conversation is rebuilt. */
  async conversationDeleted(m: EntityManager, conversationId: string): Promise<void> {
    for (const row of await this.repo.markStaleFor(m, conversationId)) await this.enqueue(m, row);
  }

  /** In an import's transaction: periods that now hold more turns are rebuilt. */
  async turnsImported(
    m: EntityManager,
    userId: string,
    legacyId: string,
    span: { from: Date; to: Date },
  ): Promise<void> {
    const to = new Date(span.to.getTime() + 1);
    for (const row of await this.repo.markStaleBetween(m, userId, legacyId, span.from, to)) {
      await this.enqueue(m, row);
    }
  }

  /** periodSummaryAdded: the member's own events, read back as they see them now. */
  subscribe(user: UserEntity, legacyId: string): AsyncIterableIterator<PeriodSummaryEntity> {
    return filterMap(
      this.bus.subscribe<PeriodSummaryEvent>(topics.memberPeriods(user.id, legacyId)),
      async (event) => (event.userId === user.id ? this.get(user, event.id) : null),
    );
  }

  private enqueue(m: EntityManager, key: Omit<PeriodJobPayload, 'force'>): Promise<boolean> {
    const payload: PeriodJobPayload = { ...key };
    return this.jobs.enqueue(PERIOD_JOB, periodJobKey(payload), { ...payload }, { manager: m });
  }

  private checkStart(period: SummaryPeriodName, start: string): void {
    if (!isPeriodStart(period, start)) {
      const what =
        period === 'WEEK'
          ? 'a Monday'
          : period === 'MONTH'
            ? 'the first day of a month'
            : 'January 1';
      throw new PeriodSummaryException(
        PeriodSummaryErrorCode.INVALID_PERIOD_START,
        `A ${period.toLowerCase()} starts on ${what} (YYYY-MM-DD); ${start} is not one.`,
        'start',
      );
    }
  }

  // ---- a question about a period --------------------------------------------------------

  /**
   * The summaries that answer for the time a question names ("last month", "in March", "this
   * year"), best fit first: the one whose span matches the named time best (overlap over union),
   * then, for a time no single summary covers, the shorter ones inside it.
   */
  async forQuestion(
    userId: string,
    legacyId: string,
    query: string,
    clock: Date,
    timeZone: string,
  ): Promise<PeriodMatch[]> {
    const max = this.config.env.PERIOD_SUMMARIES_CONTEXT_ITEMS;
    if (max === 0) return [];
    const range = parseTimeExpression(query, clock, timeZone);
    // A day or two is a question for turns, not for a look back.
    if (!range || range.to.getTime() - range.from.getTime() < 5 * DAY_MS) return [];
    const rows = await this.repo.overlapping(userId, legacyId, range.from, range.to, 100);
    const fits = rows
      .map((summary) => {
        const a = summary.startsAt.getTime();
        const b = summary.endsAt.getTime();
        const inter = Math.min(b, range.to.getTime()) - Math.max(a, range.from.getTime());
        const union = Math.max(b, range.to.getTime()) - Math.min(a, range.from.getTime());
        return { summary, fit: Math.max(0, inter / union) };
      })
      .filter((m) => m.fit >= 0.05)
      .sort((x, y) => y.fit - x.fit || x.summary.startsAt.getTime() - y.summary.startsAt.getTime());
    // The best fit, then (for a time no one summary covers, "this year") the ones that lie
    // wholly inside the time asked about and inside none already picked.
    const picked: PeriodMatch[] = fits.slice(0, 1);
    for (const match of fits.slice(1)) {
      if (picked.length >= max) break;
      const { startsAt, endsAt } = match.summary;
      if (startsAt < range.from || endsAt > range.to) continue;
      if (picked.some((p) => p.summary.startsAt <= startsAt && p.summary.endsAt >= endsAt))
        continue;
      picked.push(match);
    }
    return picked;
  }

  // ---- compareYears ---------------------------------------------------------------------

  async compareYears(
    user: UserEntity,
    args: { legacyId: string; year: number; otherYear: number; month?: number | null },
  ): Promise<YearComparison> {
    await this.legacies.requireMember(user.id, args.legacyId);
    const month = args.month ?? null;
    const current = await this.side(user.id, args.legacyId, args.year, month);
    const other = await this.side(user.id, args.legacyId, args.otherYear, month);
    const lower = (l: string[]) => new Set(l.map((x) => x.toLowerCase()));
    const otherThemes = lower(other.themes);
    const currentThemes = lower(current.themes);
    const sharedThemes = current.themes.filter((t) => otherThemes.has(t.toLowerCase()));
    const newThemes = current.themes.filter((t) => !otherThemes.has(t.toLowerCase()));
    const fadedThemes = other.themes.filter((t) => !currentThemes.has(t.toLowerCase()));
    const when = (y: number) => (month ? `${MONTH_NAMES[month - 1]} ${y}` : `${y}`);
    const describe = (s: YearSide) =>
      s.summaries.length === 0
        ? `No summary is stored for ${when(s.year)}.`
        : `${when(s.year)}: ${s.conversationCount} conversation${s.conversationCount === 1 ? '' : 's'}, ${s.turnCount} turns${s.emotionalTone ? `, the tone ${s.emotionalTone}` : ''}.`;
    const lines = [describe(current), describe(other)];
    if (current.summaries.length > 0 && other.summaries.length > 0) {
      if (sharedThemes.length > 0) lines.push(`Both came back to ${sharedThemes.join(', ')}.`);
      if (newThemes.length > 0) lines.push(`New in ${when(args.year)}: ${newThemes.join(', ')}.`);
      if (fadedThemes.length > 0) {
        lines.push(
          `Talked about in ${when(args.otherYear)} but not since: ${fadedThemes.join(', ')}.`,
        );
      }
      const newPeople = current.people.filter(
        (p) => !other.people.some((q) => q.toLowerCase() === p.toLowerCase()),
      );
      if (newPeople.length > 0) lines.push(`People first mentioned: ${newPeople.join(', ')}.`);
    }
    return {
      year: args.year,
      otherYear: args.otherYear,
      month,
      text: lines.join(' '),
      current,
      other,
      sharedThemes,
      newThemes,
      fadedThemes,
    };
  }

  /** One side: the year's (or month's) own summary, else the months of the year that exist. */
  private async side(
    userId: string,
    legacyId: string,
    year: number,
    month: number | null,
  ): Promise<YearSide> {
    let summaries: PeriodSummaryEntity[];
    if (month) {
      const start = `${year}-${String(month).padStart(2, '0')}-01`;
      summaries = await this.repo.findStarts(userId, legacyId, 'MONTH', [start]);
    } else {
      summaries = await this.repo.findStarts(userId, legacyId, 'YEAR', [`${year}-01-01`]);
      if (summaries.length === 0) {
        const months = Array.from(
          { length: 12 },
          (_, i) => `${year}-${String(i + 1).padStart(2, '0')}-01`,
        );
        summaries = await this.repo.findStarts(userId, legacyId, 'MONTH', months);
      }
    }
    const tones = summaries.map((s) => s.emotionalTone).filter((t): t is string => !!t);
    return {
      year,
      emotionalTone:
        tones.length === 1 ? tones[0] : tones.length > 1 ? unique(tones).join('; ') : null,
      // A conversation may span two months: counted once.
      conversationCount: new Set(summaries.flatMap((s) => s.conversationIds)).size,
      turnCount: summaries.reduce((n, s) => n + s.turnCount, 0),
      themes: unique(summaries.flatMap((s) => s.keyThemes)).slice(0, 12),
      people: unique(summaries.flatMap((s) => s.people)).slice(0, 20),
      places: unique(summaries.flatMap((s) => s.places)).slice(0, 20),
      summaries,
    };
  }
}
