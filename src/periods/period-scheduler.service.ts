import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { JobsService } from '../jobs/jobs.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { SUMMARY_PERIODS } from '../llm/language-model.js';
import { isDue, localDayOf, nextPeriodStart, periodStartOf, zoneOrUtc } from './period-calendar.js';
import { PERIOD_JOB, PeriodJobPayload, periodJobKey } from './period-summary-builder.service.js';
import { PeriodSummaryRepository } from './period-summary.repository.js';

const MEMBERS_PAGE = 500;

/**
 * The hourly look for ended periods. Each member has a cursor per period kind: the first
 * period not queued yet, starting with the one they joined in. A run queues every period from
 * the cursor that is due in the member's own time zone and moves the cursor past it, in one
 * transaction per member: a run cut short (a restart, the per-run cap) leaves the rest for the
 * next, and nothing is queued twice or skipped.
 */
@Injectable()
export class PeriodSchedulerService {
  private readonly logger = new Logger('PeriodScheduler');

  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: PeriodSummaryRepository,
    private readonly legacies: LegaciesService,
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
  ) {}

  /** Returns how many period jobs it queued. */
  async tick(
    now = new Date(),
    budget = this.config.env.PERIOD_SUMMARIES_PER_TICK,
  ): Promise<number> {
    let after: { userId: string; legacyId: string } | null = null;
    let queued = 0;
    while (budget > 0) {
      const members = await this.legacies.membershipsPage(after, MEMBERS_PAGE);
      // Most members have nothing due in a given hour: only those that do take a transaction.
      const cursors = await this.repo.cursorsOf(members);
      for (const member of members) {
        if (!this.anythingDue(member, cursors, now)) continue;
        const n = await this.advance(member, now, budget);
        queued += n;
        budget -= n;
        if (budget <= 0) break;
      }
      if (members.length < MEMBERS_PAGE) break;
      after = members[members.length - 1];
    }
    if (queued > 0) {
      this.logger.log({ msg: 'period summaries queued', count: queued });
      this.jobs.nudge();
    }
    return queued;
  }

  private anythingDue(
    member: { userId: string; legacyId: string; joinedAt: Date; timezone: string },
    cursors: Map<string, string>,
    now: Date,
  ): boolean {
    const zone = zoneOrUtc(member.timezone);
    const joined = localDayOf(new Date(member.joinedAt), zone);
    return SUMMARY_PERIODS.some((period) => {
      const next =
        cursors.get(`${member.userId}:${member.legacyId}:${period}`) ??
        periodStartOf(period, joined);
      return isDue(period, next, zone, now);
    });
  }

  private advance(
    member: { userId: string; legacyId: string; joinedAt: Date; timezone: string },
    now: Date,
    budget: number,
  ): Promise<number> {
    const zone = zoneOrUtc(member.timezone);
    const joined = localDayOf(new Date(member.joinedAt), zone);
    return this.dataSource.transaction(async (m) => {
      const cursors = await this.repo.cursors(m, member.userId, member.legacyId);
      let queued = 0;
      for (const period of SUMMARY_PERIODS) {
        const first = cursors.get(period) ?? periodStartOf(period, joined);
        let next = first;
        while (queued < budget && isDue(period, next, zone, now)) {
          const payload: PeriodJobPayload = {
            userId: member.userId,
            legacyId: member.legacyId,
            period,
            start: next,
          };
          await this.jobs.enqueue(
            PERIOD_JOB,
            periodJobKey(payload),
            { ...payload },
            { manager: m },
          );
          queued++;
          next = nextPeriodStart(period, next);
        }
        if (next !== first || !cursors.has(period)) {
          await this.repo.setCursor(m, member.userId, member.legacyId, period, next);
        }
      }
      return queued;
    });
  }
}
