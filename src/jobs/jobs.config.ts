import { bool, ConfigOf, defineVariables, integer } from '../config/config-spec.js';

export const jobsVariables = defineVariables({
  JOBS_WORKER: {
    description:
      'Run background jobs in this process (summaries, extraction, re-embedding, purges).',
    default: 'true',
    parse: bool,
  },
  JOBS_SCHEDULER: {
    description: 'Run the scheduled providers (sweepers, daily and weekly tasks) in this process.',
    default: 'true',
    parse: bool,
  },
  JOBS_POLL_MS: {
    description: 'How often an idle worker looks for due jobs.',
    default: '1000',
    parse: integer(50, 60_000),
  },
  JOBS_CONCURRENCY: {
    description: 'Jobs run at once by one process (the embedded database runs them one at a time).',
    default: '2',
    parse: integer(1, 32),
  },
  JOBS_LEASE_MS: {
    description: "How long a claimed job stays locked; a crashed worker's job is retried after it.",
    default: '300000',
    parse: integer(1_000, 86_400_000),
  },
  JOBS_MAX_ATTEMPTS: {
    description: 'Attempts before a job is kept as failed (platform admins can retry it).',
    default: '6',
    parse: integer(1, 100),
  },
  JOBS_RETRY_BASE_MS: {
    description: 'First retry delay of a failed job; it doubles on each attempt, with jitter.',
    default: '2000',
    parse: integer(10, 3_600_000),
  },
  JOBS_KEEP_SUCCEEDED_DAYS: {
    description: 'Days a succeeded job is kept before the cleanup task deletes it.',
    default: '7',
    parse: integer(0, 3650),
  },
  JOBS_KEEP_FAILED_DAYS: {
    description:
      'Days a job that failed for good stays listed in failedJobs (for review and retryJob) before the cleanup task deletes it.',
    default: '30',
    parse: integer(1, 3650),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof jobsVariables> {}
}
