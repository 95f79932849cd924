/**
 * npm run backfill -- --legacy <id> | --user <id> | --all [--facts] [--memories] [--dry-run]
 *                     [--include-imports] [--share-like-story]
 *
 * Reads facts from stories' passages not read yet, and (--memories) memories from exchanges in
 * conversations held with remember on that extraction never went through (imports left out
 * unless --include-imports). Without --facts or --memories, both. Resumable and idempotent: it
 * picks up where a previous run stopped, and a second run finds nothing to do. Runs against
 * the configured database (DATABASE_URL, or the embedded one in DATA_DIR while the service is
 * stopped: only one process can open it).
 */
import { parseArgs } from 'node:util';
import { SingleBar, MultiBar, Presets } from 'cli-progress';
import { createApp } from '../../bootstrap.js';
import { AppConfig, ConfigValidationError } from '../../config/app-config.js';
import { loadAppConfig } from '../../app.config.js';
import { MemoryExtractionService } from '../../memories/memory-extraction.service.js';
import { StoryFactsService } from '../../stories/story-facts.service.js';
import { BackfillProgress, BackfillRunner } from '../backfill.runner.js';

const USAGE =
  'Usage: npm run backfill -- --legacy <id> | --user <id> | --all [--facts] [--memories] [--dry-run] [--include-imports] [--share-like-story]';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A bar per kind on a terminal; plain lines (at most one every two seconds) otherwise. */
function progressFor(tty: boolean): BackfillProgress & { stop(): void } {
  const totals = { facts: 0, memories: 0 };
  const done = { facts: 0, memories: 0 };
  const started = Date.now();
  if (tty) {
    const multi = new MultiBar(
      {
        format: '{what} [{bar}] {value}/{total} | {rate}/s | ETA {eta_formatted}',
        hideCursor: true,
        clearOnComplete: false,
      },
      Presets.shades_classic,
    );
    const bars = new Map<string, SingleBar>();
    let stopped = false;
    return {
      total(what, count) {
        totals[what] = count;
        bars.set(what, multi.create(count, 0, { what: what.padEnd(8), rate: '0.0' }));
      },
      advance(what, count) {
        done[what] += count;
        const seconds = Math.max(0.001, (Date.now() - started) / 1000);
        bars.get(what)?.increment(count, { rate: (done[what] / seconds).toFixed(1) });
      },
      note(message) {
        multi.log(`${message}\n`);
      },
      stop() {
        if (stopped) return;
        stopped = true;
        multi.stop();
      },
    };
  }
  let last = 0;
  const line = (what: 'facts' | 'memories', force = false) => {
    if (!force && Date.now() - last < 2000) return;
    last = Date.now();
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    const rate = done[what] / seconds;
    const left = rate > 0 ? Math.round((totals[what] - done[what]) / rate) : null;
    console.log(
      `${what}: ${done[what]}/${totals[what]} (${rate.toFixed(1)}/s${left === null ? '' : `, about ${left} s left`})`,
    );
  };
  return {
    total(what, count) {
      totals[what] = count;
      line(what, true);
    },
    advance(what, count) {
      done[what] += count;
      line(what, done[what] === totals[what]);
    },
    note(message) {
      console.log(message);
    },
    stop() {},
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      legacy: { type: 'string' },
      user: { type: 'string' },
      all: { type: 'boolean', default: false },
      facts: { type: 'boolean', default: false },
      memories: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      'include-imports': { type: 'boolean', default: false },
      'share-like-story': { type: 'boolean', default: false },
    },
  });
  const scopes = [values.legacy, values.user, values.all ? 'all' : undefined].filter(Boolean);
  const ids = [values.legacy, values.user].filter((v): v is string => v !== undefined);
  if (scopes.length !== 1 || ids.some((id) => !UUID.test(id))) {
    console.error(USAGE);
    process.exit(2);
  }
  const both = !values.facts && !values.memories;
  let config: AppConfig;
  try {
    // No HTTP, no scheduler, no worker: this process does the work itself, in order.
    config = loadAppConfig({
      ...process.env,
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    });
  } catch (err) {
    if (err instanceof ConfigValidationError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const app = await createApp(config);
  const progress = progressFor(process.stdout.isTTY === true);
  const started = Date.now();
  try {
    const runner = new BackfillRunner(app.get(StoryFactsService), app.get(MemoryExtractionService));
    const summary = await runner.run(
      { legacyId: values.legacy ?? null, userId: values.user ?? null },
      {
        facts: both || values.facts === true,
        memories: both || values.memories === true,
        dryRun: values['dry-run'] === true,
        includeImports: values['include-imports'] === true,
        shareLikeStory: values['share-like-story'] === true,
      },
      progress,
    );
    progress.stop();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const { storyPassages: p, exchanges: e } = summary;
    console.log(
      [
        values['dry-run'] ? 'Dry run: nothing was changed.' : `Done in ${seconds} s.`,
        `Story passages to read: ${p.pending}; read ${p.read}, ${p.factsFound} facts found${p.storiesFailed > 0 ? `, ${p.storiesFailed} stories failed` : ''}.`,
        `Exchanges to extract: ${e.pending}; extracted ${e.extracted} (${e.memoriesSaved} memories saved), skipped ${e.skipped}, failed ${e.failed}.`,
        ...(p.storiesFailed + e.failed > 0
          ? [
              `The model could not do ${p.storiesFailed} stories and ${e.failed} exchanges (gone past; a later run tries them again):`,
              ...summary.failures.map((f) => `  ${f.kind} ${f.id}: ${f.error}`),
            ]
          : []),
      ].join('\n'),
    );
    // Done, but not all of it: a script that runs the backfill can tell.
    if (p.storiesFailed + e.failed > 0) process.exitCode = 3;
  } finally {
    progress.stop();
    await app.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
