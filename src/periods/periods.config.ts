import { ConfigOf, cron, defineVariables, integer } from '../config/config-spec.js';

export const periodsVariables = defineVariables({
  PERIOD_SUMMARIES_CRON: {
    description:
      "When the scheduler looks for members whose local week, month or year has ended (in each member's time zone) and queues their period summaries; a missed run is caught up at the next.",
    default: '5 * * * *',
    parse: cron,
  },
  PERIOD_SUMMARIES_PER_TICK: {
    description:
      'Period summaries one scheduler run queues at most; the rest (a long catch-up) follow at the next runs.',
    default: '2000',
    parse: integer(1, 1_000_000),
  },
  PERIOD_SUMMARIES_CONTEXT_ITEMS: {
    description:
      'Period summaries given to the agent (and put first in recall) for a question about a period ("last month", "in March"); 0 turns this off.',
    default: '2',
    parse: integer(0, 12),
  },
  PERIOD_BACKFILL_MAX_PERIODS: {
    description:
      'Periods (weeks, months and years together) one backfillPeriodSummaries may queue.',
    default: '1500',
    parse: integer(1, 100_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof periodsVariables> {}
}
