import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { CandidateRepository } from './candidate.repository.js';
import { asksSummary, extractIdentifiers, isCodeQuery, refersBack } from './query-analysis.js';
import { searchSettings, SearchSettings } from './search.config.js';
import { SearchRepository } from './search.repository.js';
import { SearchRun } from './search-run.js';
import type { Degradation, PathTimings } from './search-run.js';
import { SearchStatsRepository } from './search-stats.repository.js';
import { PathName, QueryFeatures, Ranked, SOURCE_KINDS, SourceKind } from './search.types.js';
import { parseTimeExpression } from './time-expressions.js';

export interface SearchRequest {
  user: { id: string; timezone?: string | null };
  legacyId: string;
  /** The current conversation; null searches the user's whole legacy at once (recall). */
  conversationId: string | null;
  /** Turns of the current conversation from this index on are already in the prompt. */
  beforeTurn?: number | null;
  query: string;
  /** The conversation's clock, which time expressions are relative to. */
  clock: Date;
  /** Overrides of the configured settings (the switches' tests, the debug view). */
  settings?: Partial<SearchSettings>;
  /** The query vector when the caller already has it (shared by the context's providers). */
  queryVector?: () => Promise<QueryVector | null>;
  /** How long the shared vector took to make: timing the await would see a settled promise. */
  queryVectorMs?: () => number;
  /** What widening searches (default: everything searchable). */
  widenKinds?: SourceKind[];
}

export type WidenReason = 'few_good_hits' | 'refers_back' | 'recall';

export interface SearchOutcome {
  features: QueryFeatures;
  settings: SearchSettings;
  /** Every candidate, fused, best first. */
  ranked: Ranked[];
  /** Good hits in the current conversation (what widening was decided on). */
  goodHits: number;
  widened: boolean;
  widenReason: WidenReason | null;
  /** The trigram fallback ran (full-text search found fewer than 2 hits). */
  fallback: boolean;
  /** SEARCH_TIME=filter kept only items of the named period. */
  timeFiltered: boolean;
  /** Paths that could not run: dense (no query vector), lexical (full-text failed). */
  degraded: Degradation[];
  /** The first stage that failed, if any (`dense`, `lexical`, `trigram`, `time`, `details`). */
  failedStage: string | null;
  /** Candidates each path found, and candidates per source after merging. */
  hits: Record<PathName, number>;
  bySource: Record<SourceKind, number>;
  embedMs: number;
  searchMs: number;
  /** Time spent on each path (full text includes its statistics), and on fusion, in ms. */
  pathMs: PathTimings;
  /** The best dense (cosine) similarities among the candidates, best first (at most 3). */
  topSimilarities: number[];
}

/** How many of the best dense similarities a metrics row keeps. */
const TOP_SIMILARITIES = 3;

/**
 * Hybrid search over what the user may see: their turns (segments) and summaries, their
 * memories and the legacy's facts that are theirs or shared. The current conversation is
 * searched first; the search widens to the user's other conversations about the legacy, their
 * memories and the visible facts when it finds fewer than SEARCH_MIN_GOOD_HITS good hits or
 * when the message refers back ("last time", 之前, 上次). A failing path degrades the search
 * (dense only, or lexical only) instead of failing it; the outcome says what happened.
 */
@Injectable()
export class HybridSearchService {
  private readonly defaults: SearchSettings;

  constructor(
    private readonly paths: SearchRepository,
    private readonly statistics: SearchStatsRepository,
    private readonly candidates: CandidateRepository,
    private readonly embeddings: EmbeddingService,
    config: AppConfig,
  ) {
    this.defaults = searchSettings(config.env);
  }

  settings(overrides?: Partial<SearchSettings>): SearchSettings {
    return {
      ...this.defaults,
      ...overrides,
      weights: { ...this.defaults.weights, ...overrides?.weights },
      bm25: { ...this.defaults.bm25, ...overrides?.bm25 },
    };
  }

  features(query: string, clock: Date, timezone?: string | null): QueryFeatures {
    const identifiers = extractIdentifiers(query);
    return {
      text: query,
      identifiers,
      code: isCodeQuery(query, identifiers),
      refersBack: refersBack(query),
      asksSummary: asksSummary(query),
      timeRange: parseTimeExpression(query, clock, timezone ?? 'UTC'),
      clock,
    };
  }

  /** The clock of a legacy for recall: when the user last said something about it. */
  async legacyClock(userId: string, legacyId: string): Promise<Date> {
    return (await this.statistics.latestOccurred(userId, legacyId)) ?? new Date();
  }

  async search(request: SearchRequest): Promise<SearchOutcome> {
    const settings = this.settings(request.settings);
    const features = this.features(request.query, request.clock, request.user.timezone);
    const run = new SearchRun(this.paths, this.statistics, this.candidates, settings, features, {
      userId: request.user.id,
      legacyId: request.legacyId,
      conversationId: request.conversationId,
      beforeTurn: request.beforeTurn ?? null,
    });

    const embedStarted = performance.now();
    const pending = request.queryVector?.() ?? this.embeddings.embedQuery(request.query);
    // The query's word statistics need no vector: read them while it is being computed.
    const statistics = settings.hybrid ? run.prepareLexical(true) : null;
    const vector = await pending;
    const embedMs = request.queryVectorMs?.() ?? performance.now() - embedStarted;
    const searchStarted = performance.now();
    if (!vector) run.degrade('dense');
    // Hybrid off searches by meaning only, unless no query vector can be made.
    await (statistics ?? run.prepareLexical(!vector));

    let widenReason: WidenReason | null = null;
    let goodHits = 0;
    if (request.conversationId) {
      const wider = request.widenKinds ?? SOURCE_KINDS;
      if (features.refersBack) {
        // The message alone decides to widen: both scopes are searched side by side.
        widenReason = 'refers_back';
        await run.searchScopes(
          [
            ['current', ['segment', 'summary']],
            ['wider', wider],
          ],
          vector,
        );
        // Counted as when the current conversation is searched alone (what it is ranked against).
        goodHits = run.rank(1).filter((r) => r.scope === 'current' && r.good).length;
      } else {
        await run.searchScope('current', ['segment', 'summary'], vector);
        goodHits = run.rank().filter((r) => r.scope === 'current' && r.good).length;
        if (goodHits < settings.minGoodHits) widenReason = 'few_good_hits';
      }
      if (widenReason === 'few_good_hits') {
        await run.searchScope('wider', wider, vector);
      } else if (!widenReason && request.widenKinds?.includes('story')) {
        // The legacy's stories belong beside the conversation at every turn, widened or not.
        await run.searchScope('wider', ['story'], vector);
      }
    } else {
      widenReason = 'recall';
      await run.searchScope('all', SOURCE_KINDS, vector);
    }

    let ranked = run.rank();
    let timeFiltered = false;
    if (settings.time === 'filter' && features.timeRange) {
      const inRange = ranked.filter((r) => r.components.time === 1);
      // A period with nothing in it filters nothing: better an answer from another time.
      if (inRange.length > 0) {
        ranked = inRange;
        timeFiltered = true;
      }
    }
    const bySource = Object.fromEntries(SOURCE_KINDS.map((k) => [k, 0])) as Record<
      SourceKind,
      number
    >;
    for (const r of ranked) bySource[r.kind]++;
    const topSimilarities = ranked
      .map((r) => r.paths.dense?.score)
      .filter((v): v is number => v !== undefined)
      .sort((a, b) => b - a)
      .slice(0, TOP_SIMILARITIES);
    return {
      features,
      settings,
      ranked,
      goodHits,
      widened: widenReason === 'few_good_hits' || widenReason === 'refers_back',
      widenReason,
      fallback: run.fallback,
      timeFiltered,
      degraded: run.degraded,
      failedStage: run.failedStage,
      hits: run.hits,
      bySource,
      embedMs,
      searchMs: performance.now() - searchStarted,
      pathMs: { ...run.pathMs },
      topSimilarities,
    };
  }
}
