import { setTimeout as sleep } from 'node:timers/promises';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { ModelOutputError } from '../llm/model.errors.js';
import type { MemoryExtractionService } from '../memories/memory-extraction.service.js';
import type { StoryFactsService } from '../stories/story-facts.service.js';

export interface BackfillScope {
  legacyId?: string | null;
  userId?: string | null;
}

export interface BackfillOptions {
  facts: boolean;
  memories: boolean;
  dryRun: boolean;
  includeImports: boolean;
  /** New facts take their story's visibility rather than PRIVATE. */
  shareLikeStory: boolean;
}

/** Told of each unit done (a story passage, an exchange), and once of the total. */
export interface BackfillProgress {
  total(what: 'facts' | 'memories', count: number): void;
  advance(what: 'facts' | 'memories', count: number): void;
  note(message: string): void;
}

export interface BackfillSummary {
  storyPassages: { pending: number; read: number; factsFound: number; storiesFailed: number };
  exchanges: {
    pending: number;
    extracted: number;
    skipped: number;
    memoriesSaved: number;
    /** Exchanges the model could not extract: gone past, tried again by a later run. */
    failed: number;
  };
  /** What failed, the first FAILURES_LISTED of it: where, and why. */
  failures: { kind: 'story' | 'exchange'; id: string; error: string }[];
}

const FAILURES_LISTED = 50;

const EXCHANGES_PAGE = 200;
/**
 * A model outage: wait, from 30 s doubling to 5 min between tries, for an hour in all before
 * giving up (a later run resumes where this one stopped).
 */
const OUTAGE_FIRST_WAIT_MS = 30_000;
const OUTAGE_MAX_WAIT_MS = 5 * 60_000;
const OUTAGE_GIVE_UP_MS = 60 * 60_000;

/**
 * The backfill behind `npm run backfill`: facts from stories' unread passages, and memories from
 * exchanges that extraction never completed (conversations held with remember on; imports only
 * when asked). Both ledgers (passages read, extractions completed) make it resumable and
 * idempotent: a second run finds nothing to do.
 */
export class BackfillRunner {
  constructor(
    private readonly storyFacts: StoryFactsService,
    private readonly memories: MemoryExtractionService,
  ) {}

  async run(
    scope: BackfillScope,
    options: BackfillOptions,
    progress: BackfillProgress,
  ): Promise<BackfillSummary> {
    const summary: BackfillSummary = {
      storyPassages: { pending: 0, read: 0, factsFound: 0, storiesFailed: 0 },
      exchanges: { pending: 0, extracted: 0, skipped: 0, memoriesSaved: 0, failed: 0 },
      failures: [],
    };
    if (options.facts) await this.facts(scope, options, progress, summary);
    if (options.memories) await this.exchanges(scope, options, progress, summary);
    return summary;
  }

  private async facts(
    scope: BackfillScope,
    options: BackfillOptions,
    progress: BackfillProgress,
    summary: BackfillSummary,
  ): Promise<void> {
    const stories = await this.storyFacts.storiesToExtract({
      legacyId: scope.legacyId,
      authorId: scope.userId,
    });
    summary.storyPassages.pending = stories.reduce((n, s) => n + s.pending, 0);
    progress.total('facts', summary.storyPassages.pending);
    if (options.dryRun) return;
    for (const story of stories) {
      const done = await this.patiently(progress, () =>
        this.storyFacts.extract(
          { storyId: story.id, shareLikeStory: options.shareLikeStory },
          { onProgress: (read) => progress.advance('facts', read) },
        ),
      ).catch((err: unknown) => this.failed(err, summary, progress, 'story', story.id));
      if (!done) {
        summary.storyPassages.storiesFailed++;
        continue;
      }
      summary.storyPassages.read += done.passagesRead;
      summary.storyPassages.factsFound += done.factsFound;
    }
  }

  private async exchanges(
    scope: BackfillScope,
    options: BackfillOptions,
    progress: BackfillProgress,
    summary: BackfillSummary,
  ): Promise<void> {
    const filter = { ...scope, includeImports: options.includeImports };
    // Counted first (pages of ids), for the total and for --dry-run.
    let pending = 0;
    for (let after = null as { conversationId: string; turnIndex: number } | null; ;) {
      const page = await this.memories.unextracted(filter, EXCHANGES_PAGE, after);
      pending += page.length;
      if (page.length < EXCHANGES_PAGE) break;
      after = page[page.length - 1];
    }
    summary.exchanges.pending = pending;
    progress.total('memories', pending);
    if (options.dryRun) return;
    let after: { conversationId: string; turnIndex: number } | null = null;
    for (;;) {
      const page = await this.memories.unextracted(filter, EXCHANGES_PAGE, after);
      for (const exchange of page) {
        const outcome = await this.patiently(progress, () =>
          this.memories.run({
            userMessageId: exchange.userMessageId,
            assistantMessageId: exchange.assistantMessageId,
          }),
        ).catch((err: unknown) =>
          this.failed(err, summary, progress, 'exchange', exchange.userMessageId),
        );
        if (outcome === null) {
          summary.exchanges.failed++;
        } else if (typeof outcome === 'object') {
          summary.exchanges.extracted++;
          summary.exchanges.memoriesSaved += outcome.saved;
        } else {
          summary.exchanges.skipped++;
        }
        progress.advance('memories', 1);
      }
      if (page.length < EXCHANGES_PAGE) return;
      after = page[page.length - 1];
    }
  }

  /**
   * A unit the model could not do (its answer refused after every attempt) is gone past and
   * reported: one bad answer must not stop the rest, and a later run tries it again. Anything
   * else (the database, an outage that outlasted the wait) stops the run.
   */
  private failed(
    err: unknown,
    summary: BackfillSummary,
    progress: BackfillProgress,
    kind: 'story' | 'exchange',
    id: string,
  ): null {
    if (!(err instanceof ModelOutputError)) throw err;
    const error = err.message.slice(0, 300);
    if (summary.failures.length < FAILURES_LISTED) summary.failures.push({ kind, id, error });
    progress.note(`${kind} ${id} failed and was gone past: ${error}`);
    if (kind === 'exchange') progress.advance('memories', 1);
    return null;
  }

  /** Runs a step, waiting out rate limits and (a while) model outages, as the job queue would. */
  private async patiently<T>(progress: BackfillProgress, step: () => Promise<T>): Promise<T> {
    let waited = 0;
    for (let wait = OUTAGE_FIRST_WAIT_MS; ;) {
      try {
        return await step();
      } catch (err) {
        if (err instanceof JobDeferred) {
          progress.note(`waiting ${Math.ceil(err.delayMs / 1000)} s: ${err.message}`);
          await sleep(err.delayMs);
          continue;
        }
        const retryable = (err as { retryable?: boolean }).retryable === true;
        if (!retryable || waited >= OUTAGE_GIVE_UP_MS) throw err;
        progress.note(`model unavailable, trying again in ${wait / 1000} s`);
        await sleep(wait);
        waited += wait;
        wait = Math.min(OUTAGE_MAX_WAIT_MS, wait * 2);
      }
    }
  }
}
