import { agentVariables } from './agent/agent.config.js';
import { consoleVariables, validateConsoleConfig } from './console/console.config.js';
import { contextVariables } from './context/context.config.js';
import { conversationsVariables } from './conversations/conversations.config.js';
import { databaseVariables, validateDatabaseConfig } from './database/database.config.js';
import { backupsVariables } from './backups/backups.config.js';
import { factsVariables } from './facts/facts.config.js';
import { identityVariables, validateIdentityConfig } from './identity/identity.config.js';
import { pubsubVariables, validatePubsubConfig } from './pubsub/pubsub.config.js';
import { rateLimitVariables } from './rate-limit/rate-limit.config.js';
import { jobsVariables } from './jobs/jobs.config.js';
import { legaciesVariables } from './legacies/legacies.config.js';
import { memoriesVariables } from './memories/memories.config.js';
import { llmVariables, validateLlmConfig } from './llm/llm.config.js';
import { searchVariables, validateSearchConfig } from './search/search.config.js';
import { summariesVariables } from './summaries/summaries.config.js';
import { periodsVariables } from './periods/periods.config.js';
import { storiesVariables } from './stories/stories.config.js';
import { signalsVariables } from './signals/signals.config.js';
import { metricsVariables } from './metrics/metrics.config.js';
import { profilesVariables } from './profiles/profiles.config.js';
import { archivesVariables } from './archives/archives.config.js';
import { AppConfig, CrossCheck, Settings } from './config/app-config.js';
import { serverVariables } from './config/config.schema.js';

/**
 * Every module's variables, in docs/configuration.md's order. Each module declares its own
 * (`<module>.config.ts`); a new module's are added here.
 */
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
export const CROSS_CHECKS: readonly CrossCheck[] = [
  validateLlmConfig,
  validateSearchConfig,
  validateIdentityConfig,
  validateConsoleConfig,
  validatePubsubConfig,
  validateDatabaseConfig,
];

/** Every module's settings, validated together once at boot. */
export const APP_SETTINGS: Settings = { variables: ALL_VARIABLES, checks: CROSS_CHECKS };

/**
 * The service's configuration from the environment (or, in tests and tools, from the values
 * given): every setting parsed and checked at once; ConfigValidationError lists what is wrong.
 */
export function loadAppConfig(source: Record<string, string | undefined> = process.env): AppConfig {
  return AppConfig.load(APP_SETTINGS, source);
}
