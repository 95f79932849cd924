import { SourceType } from '../context/models/context-enums.model.js';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  AssembledContext,
  AssemblyObserver,
  ContextRequest,
} from '../context/context.types.js';
import { countTokens } from '../llm/tokenizer.js';
import { isForgotComplaint } from '../signals/forgot-complaint.js';
import { evaluateTriggers } from '../signals/upgrade-triggers.js';
import type { SearchOutcome } from './hybrid-search.service.js';
import type { MemoryMetricsReportModel } from './models/retrieval-metrics.model.js';
import { MetricRow, MetricsRepository } from './metrics.repository.js';
import type { RetrievalOperation } from './retrieval-metric.entity.js';
import { SearchContextService } from './search-context.service.js';
import { SearchErrorCode, SearchException } from './search.exception.js';

const ZERO_HITS = { dense: 0, lexical: 0, trigram: 0, time: 0 };
const ZERO_SOURCES = { segment: 0, summary: 0, fact: 0, memory: 0 };
const ZERO_PATH_MS = { dense: 0, lexical: 0, trigram: 0, fusion: 0 };
const DAY_MS = 86_400_000;

/**
 * One metrics row per context assembly (written by the assembler's observer hook, so every
 * reply gets it) and per recall. Rows hold counts and timings; the query text only with
 * SEARCH_METRICS_TEXT on. Recording never fails the retrieval it measures.
 */
@Injectable()
export class RetrievalMetricsService implements AssemblyObserver {
  private readonly logger = new Logger('RetrievalMetrics');

  constructor(
    private readonly repo: MetricsRepository,
    private readonly context: SearchContextService,
    private readonly config: AppConfig,
  ) {}

  async assembled(request: ContextRequest, context: AssembledContext): Promise<void> {
    let outcome: SearchOutcome | null = null;
    let failedStage: string | null = null;
    try {
      outcome = (await this.context.outcomeOf(request)) ?? null;
    } catch {
      failedStage = 'search';
    }
    const failure = context.failures?.[0];
    const itemsBySource: Record<string, number> = {};
    for (const item of context.items) {
      itemsBySource[item.sourceType] = (itemsBySource[item.sourceType] ?? 0) + 1;
    }
    await this.record({
      ...this.fromOutcome(outcome, request.query),
      operation: request.purpose ?? 'REPLY',
      userId: request.user.id,
      legacyId: request.legacy.id,
      conversationId: request.conversation.id,
      failedStage:
        outcome?.failedStage ?? failedStage ?? (failure ? `provider:${failure.section}` : null),
      items: context.items.length,
      itemsBySource,
      tokens: context.tokenCount,
      budget: context.budget,
      truncated: context.truncated,
      totalMs: context.totalMs ?? 0,
      memoryHoldout: context.memoryHoldout ?? false,
      // The query of a reply (and of the context query) is the user's turn.
      forgotComplaint: isForgotComplaint(request.query),
    });
  }

  async recall(
    user: { id: string },
    legacyId: string,
    outcome: SearchOutcome,
    returned: { sourceType: string }[],
    totalMs: number,
  ): Promise<void> {
    const itemsBySource: Record<string, number> = {};
    for (const item of returned) {
      itemsBySource[item.sourceType] = (itemsBySource[item.sourceType] ?? 0) + 1;
    }
    await this.record({
      ...this.fromOutcome(outcome, outcome.features.text),
      operation: 'RECALL',
      userId: user.id,
      legacyId,
      conversationId: null,
      failedStage: outcome.failedStage,
      items: returned.length,
      itemsBySource,
      tokens: 0,
      budget: 0,
      truncated: false,
      totalMs,
      memoryHoldout: false,
      forgotComplaint: false,
    });
  }

  private fromOutcome(
    outcome: SearchOutcome | null,
    query: string,
  ): Omit<
    MetricRow,
    | 'operation'
    | 'userId'
    | 'legacyId'
    | 'conversationId'
    | 'failedStage'
    | 'items'
    | 'itemsBySource'
    | 'tokens'
    | 'budget'
    | 'truncated'
    | 'totalMs'
    | 'memoryHoldout'
    | 'forgotComplaint'
  > {
    const env = this.config.env;
    return {
      hybrid: outcome?.settings.hybrid ?? env.SEARCH_HYBRID,
      fusion: outcome?.settings.fusion ?? env.SEARCH_FUSION,
      hits: outcome?.hits ?? ZERO_HITS,
      bySource: outcome?.bySource ?? ZERO_SOURCES,
      goodHits: outcome?.goodHits ?? 0,
      fallback: outcome?.fallback ?? false,
      widened: outcome?.widened ?? false,
      widenReason: outcome?.widenReason ?? null,
      timeFiltered: outcome?.timeFiltered ?? false,
      degraded: outcome?.degraded ?? [],
      embedMs: outcome?.embedMs ?? 0,
      searchMs: outcome?.searchMs ?? 0,
      queryTokens: countTokens(query),
      queryText: env.SEARCH_METRICS_TEXT ? query : null,
      pathMs: outcome?.pathMs ?? ZERO_PATH_MS,
      topSimilarities: outcome?.topSimilarities ?? [],
    };
  }

  private async record(row: MetricRow & { operation: RetrievalOperation }): Promise<void> {
    try {
      await this.repo.insert(row);
    } catch (err) {
      this.logger.warn({
        msg: 'could not record retrieval metrics',
        error: (err as Error).message,
      });
    }
  }

  /** memoryMetricsReport: the metrics of a period, summed. */
  async report(from: Date, to: Date): Promise<MemoryMetricsReportModel> {
    if (!(from < to)) {
      throw new SearchException(
        SearchErrorCode.INVALID_PERIOD,
        '`from` must be before `to`.',
        'to',
      );
    }
    const env = this.config.env;
    const [a, spend] = await Promise.all([
      this.repo.aggregate(from, to, env.TRIGGER_FULL_TEXT_MIN_HITS),
      this.repo.modelSpend(from, to),
    ]);
    const totalItems = a.composition.reduce((sum, c) => sum + c.items, 0);
    const triggers = evaluateTriggers(
      { ...a, ...spend, periodDays: (to.getTime() - from.getTime()) / DAY_MS },
      {
        fullTextMinHits: env.TRIGGER_FULL_TEXT_MIN_HITS,
        fewFullTextShare: env.TRIGGER_FEW_FULL_TEXT_SHARE,
        fallbackShare: env.TRIGGER_FALLBACK_SHARE,
        summariesOnlyShare: env.TRIGGER_SUMMARIES_ONLY_SHARE,
        truncationShare: env.TRIGGER_TRUNCATION_SHARE,
        p95LatencyMs: env.TRIGGER_P95_LATENCY_MS,
        summarySpendShare: env.TRIGGER_SUMMARY_SPEND_SHARE,
        forgotPerWeek: env.TRIGGER_FORGOT_PER_WEEK,
        minAssemblies: env.TRIGGER_MIN_ASSEMBLIES,
      },
    );
    return {
      from,
      to,
      ...a,
      ...spend,
      summarySpendShare: spend.modelTokens > 0 ? spend.summaryTokens / spend.modelTokens : 0,
      triggers,
      hitsByPath: Object.entries(a.hitsByPath).map(([path, hits]) => ({ path, hits })),
      // Every key recorded is a SourceType (items_by_source); one that is not could not be sent.
      composition: a.composition
        .filter((c): c is { source: SourceType; items: number } => c.source in SourceType)
        .map((c) => ({
          sourceType: c.source,
          items: c.items,
          share: totalItems > 0 ? c.items / totalItems : 0,
        })),
    };
  }
}
