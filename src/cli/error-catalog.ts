import {
  COMMON_REASONS,
  PUBLIC_CODES,
  type ReasonTable,
} from '../common/errors/domain.exception.js';
import { CONSOLE_REASONS } from '../console/console.exception.js';
import { CONTEXT_REASONS } from '../context/context.exception.js';
import { CONVERSATION_REASONS } from '../conversations/conversation.exception.js';
import { DATABASE_REASONS } from '../database/database.exception.js';
import { FACT_REASONS } from '../facts/facts.exception.js';
import { IDENTITY_REASONS } from '../identity/identity.exception.js';
import { JOBS_REASONS } from '../jobs/jobs.exception.js';
import { LEGACY_REASONS } from '../legacies/legacy.exception.js';
import { MEMORY_REASONS } from '../memories/memory.exception.js';
import { PERIOD_SUMMARY_REASONS } from '../periods/period-summary.exception.js';
import { PROFILE_REASONS } from '../profiles/profile.exception.js';
import { SEARCH_REASONS } from '../search/search.exception.js';
import { SIGNALS_REASONS } from '../signals/signals.exception.js';
import { STORY_REASONS } from '../stories/story.exception.js';
import { REQUEST_REASONS } from '../graphql/request-errors.js';

/** Every module's reasons, as src/app.config.ts lists every module's variables. */
export const REASON_TABLES: readonly ReasonTable<string>[] = [
  REQUEST_REASONS,
  COMMON_REASONS,
  IDENTITY_REASONS,
  CONSOLE_REASONS,
  DATABASE_REASONS,
  LEGACY_REASONS,
  CONVERSATION_REASONS,
  CONTEXT_REASONS,
  SEARCH_REASONS,
  FACT_REASONS,
  MEMORY_REASONS,
  PERIOD_SUMMARY_REASONS,
  PROFILE_REASONS,
  STORY_REASONS,
  JOBS_REASONS,
  SIGNALS_REASONS,
];

/** Codes graphql-js and Apollo give a document that cannot run at all; no reason goes with them. */
export const DOCUMENT_CODES: Readonly<Record<string, { status: number; means: string }>> = {
  GRAPHQL_PARSE_FAILED: {
    status: 400,
    means: 'The document is not GraphQL (a syntax error); `locations` says where.',
  },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    means:
      'The document asks for something the schema does not have or breaks a GraphQL rule; `locations` says where (with introspection off the message names nothing of the schema).',
  },
};

export interface ReasonRow {
  reason: string;
  code: string;
  means: string;
}

/**
 * One row per reason. A reason several modules share (CONVERSATION_NOT_FOUND) must mean one code
 * everywhere; its distinct meanings are joined.
 */
export function reasonRows(tables: readonly ReasonTable<string>[] = REASON_TABLES): ReasonRow[] {
  const rows = new Map<string, ReasonRow>();
  for (const table of tables) {
    for (const [reason, spec] of Object.entries(table)) {
      const seen = rows.get(reason);
      if (!seen) {
        rows.set(reason, { reason, code: spec.code, means: spec.means });
      } else if (seen.code !== spec.code) {
        throw new Error(`${reason} is ${seen.code} in one module and ${spec.code} in another`);
      } else if (!seen.means.includes(spec.means)) {
        seen.means = `${seen.means} ${spec.means}`;
      }
    }
  }
  const order = Object.keys(PUBLIC_CODES);
  return [...rows.values()].sort(
    (a, b) => order.indexOf(a.code) - order.indexOf(b.code) || a.reason.localeCompare(b.reason),
  );
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Every `extensions.code`, with the HTTP status of a request refused with it. */
export function codeTable(): string {
  return [
    '| `extensions.code` | HTTP status of a refused request | What it means |',
    '| --- | --- | --- |',
    ...Object.entries({ ...PUBLIC_CODES, ...DOCUMENT_CODES }).map(
      ([code, { status, means }]) => `| \`${code}\` | ${status} | ${cell(means)} |`,
    ),
  ].join('\n');
}

/** Every `extensions.reason`, with its code. */
export function reasonTable(): string {
  return [
    '| `extensions.reason` | `extensions.code` | What it means |',
    '| --- | --- | --- |',
    ...reasonRows().map((r) => `| \`${r.reason}\` | \`${r.code}\` | ${cell(r.means)} |`),
  ].join('\n');
}

/** docs/errors.md's two tables: the codes, then every reason with its code. */
export function errorTables(): string {
  return `${codeTable()}\n\n${reasonTable()}`;
}

/** docs/errors.md whole: printed by `npm run errors:table`, never edited by hand. */
export function errorsDocument(): string {
  return [
    '# Errors',
    '',
    "<!-- Printed by `npm run errors:table` from the code (each module's reasons beside its exception, src/*/*.exception.ts, and the request's in src/graphql/request-errors.ts): edit those, not this file. `npm run docs:check` fails when it differs from them. -->",
    '',
    'Every error carries a stable `extensions.code`, and every error Keepsake raises a finer `extensions.reason`; a `BAD_USER_INPUT` names the input at fault in `extensions.field`. Where errors come, and their shape over HTTP and graphql-ws, is under [Errors](api.md#errors) in the API guide.',
    '',
    '## Codes',
    '',
    codeTable(),
    '',
    '## Reasons',
    '',
    reasonTable(),
    '',
  ].join('\n');
}
