import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
} from '../context/context.types.js';
import { scoreList } from '../context/context.presenter.js';
import type { UserEntity } from '../identity/user.entity.js';
import { countTokens } from '../llm/tokenizer.js';
import { recallId } from '../search/recall-id.js';
import type { RecallSource } from '../search/search.service.js';
import type { RecallHit } from '../search/models/recall.model.js';
import { PeriodMatch, PeriodSummariesService } from './period-summaries.service.js';

export const PERIOD_SOURCE_TYPE = 'PERIOD_SUMMARY' as const;

const PERIOD_WORD = { WEEK: 'Week', MONTH: 'Month', YEAR: 'Year' } as const;

/** A question about a period ("last month", "this year", "in March") gets that period's summary. */
@Injectable()
export class PeriodSummariesContextProvider implements ContextSectionProvider {
  readonly section = 'periods' as const;

  constructor(
    private readonly periods: PeriodSummariesService,
    private readonly config: AppConfig,
  ) {}

  get maxItems(): number {
    return this.config.env.PERIOD_SUMMARIES_CONTEXT_ITEMS;
  }

  async collect(request: ContextRequest): Promise<ContextItem[]> {
    const matches = await this.periods.forQuestion(
      request.user.id,
      request.legacy.id,
      request.query,
      request.clock ?? request.now,
      request.user.timezone,
    );
    return matches.map((m) => this.item(m));
  }

  private item({ summary, fit }: PeriodMatch): ContextItem {
    const text = `- ${PERIOD_WORD[summary.period]} of ${summary.start} to ${summary.end}: ${summary.summary}`;
    return {
      sourceType: PERIOD_SOURCE_TYPE,
      id: summary.id,
      text,
      tokens: countTokens(text),
      score: fit,
      scores: { time: fit, final: fit },
      provenance: {
        sourceType: PERIOD_SOURCE_TYPE,
        sourceId: summary.id,
        conversationId: null,
        messageIds: [],
        messageMetadata: [],
        turnRange: null,
        occurredAt: summary.endsAt,
        createdAt: summary.createdAt,
        period: {
          period: summary.period,
          start: summary.start,
          end: summary.end,
          builtFrom: summary.period === 'WEEK' ? summary.sourceChunkIds : summary.sourcePeriodIds,
        },
      },
    };
  }

  /** Recall: the same summaries, first, for the member's own questions. */
  async collectForRecall(
    user: UserEntity,
    legacyId: string,
    query: string,
    clock: Date,
  ): Promise<RecallHit[]> {
    const matches = await this.periods.forQuestion(user.id, legacyId, query, clock, user.timezone);
    return matches.map((m) => {
      const item = this.item(m);
      return {
        item: {
          id: recallId(PERIOD_SOURCE_TYPE, item.id),
          sourceType: PERIOD_SOURCE_TYPE,
          sourceId: item.id,
          text: m.summary.summary,
          forgettable: true,
          provenance: item.provenance,
        },
        score: item.score,
        scores: scoreList(item.scores),
      };
    });
  }

  /** What `recall` and `forgetRecallItem` ask of this module. */
  asRecallSource(): RecallSource {
    return {
      sourceType: PERIOD_SOURCE_TYPE,
      collect: (user, legacyId, query, clock) =>
        this.collectForRecall(user, legacyId, query, clock),
      forget: async (user, id) => {
        await this.periods.delete(user, id);
        return { forgotten: true };
      },
    };
  }
}
