import { agentVariables } from '../agent/agent.config.js';
import { consoleVariables, validateConsoleConfig } from '../console/console.config.js';
import { contextVariables } from '../context/context.config.js';
import { conversationsVariables } from '../conversations/conversations.config.js';
import { databaseVariables } from '../database/database.config.js';
import { backupsVariables } from '../backups/backups.config.js';
import { factsVariables } from '../facts/facts.config.js';
import { identityVariables, validateIdentityConfig } from '../identity/identity.config.js';
import { pubsubVariables } from '../pubsub/pubsub.config.js';
import { rateLimitVariables } from '../rate-limit/rate-limit.config.js';
import { jobsVariables } from '../jobs/jobs.config.js';
import { legaciesVariables } from '../legacies/legacies.config.js';
import { memoriesVariables } from '../memories/memories.config.js';
import { llmVariables, validateLlmConfig } from '../llm/llm.config.js';
import { searchVariables, validateSearchConfig } from '../search/search.config.js';
import { summariesVariables } from '../summaries/summaries.config.js';
import { periodsVariables } from '../periods/periods.config.js';
import { storiesVariables } from '../stories/stories.config.js';
import { signalsVariables } from '../signals/signals.config.js';
import { metricsVariables } from '../metrics/metrics.config.js';
import { profilesVariables } from '../profiles/profiles.config.js';
import { archivesVariables } from '../archives/archives.config.js';
import { serverVariables } from './config.schema.js';

/** Every module's variables, in docs/configuration.md's order. Add a module's declarations here. */
export const ALL_VARIABLES = {
  ...serverVariables,
  ...databaseVariables,
  ...backupsVariables,
  ...pubsubVariables,
  ...identityVariables,
  ...rateLimitVariables,
  ...legaciesVariables,
  ...conversationsVariables,
  ...contextVariables,
  ...agentVariables,
  ...jobsVariables,
  ...summariesVariables,
  ...periodsVariables,
  ...storiesVariables,
  ...archivesVariables,
  ...profilesVariables,
  ...factsVariables,
  ...memoriesVariables,
  ...searchVariables,
  ...llmVariables,
  ...signalsVariables,
  ...metricsVariables,
  ...consoleVariables,
};

/** Checks that span several variables, run after each variable parsed on its own. */
export const CROSS_CHECKS: ((env: never) => string[])[] = [
  validateLlmConfig,
  validateSearchConfig,
  validateIdentityConfig,
  validateConsoleConfig,
  (env: { EVENT_BUS: string; DATABASE_URL?: string }) =>
    env.EVENT_BUS === 'postgres' && !env.DATABASE_URL
      ? ['EVENT_BUS=postgres needs DATABASE_URL']
      : [],
  (env: {
    DATABASE_URL?: string;
    DATABASE_REPLICA_URLS?: string[];
    DATABASE_LISTEN_URL?: string;
  }) =>
    [
      env.DATABASE_REPLICA_URLS && 'DATABASE_REPLICA_URLS',
      env.DATABASE_LISTEN_URL && 'DATABASE_LISTEN_URL',
    ]
      .filter((name): name is string => !!name && !env.DATABASE_URL)
      .map((name) => `${name} needs DATABASE_URL (the embedded database has no replicas)`),
];
