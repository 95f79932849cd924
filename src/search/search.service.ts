import { DatabaseReads } from '../database/database-reads.js';
import { Injectable, Logger } from '@nestjs/common';
import {
  CommonErrorCode,
  CommonException,
  DomainException,
  PublicErrorCode,
} from '../common/errors/domain.exception.js';
import { finite, scoreList } from '../context/context.presenter.js';
import { EmbeddingService, QueryVector } from '../embeddings/embedding.service.js';
import { FactsService } from '../facts/facts.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { MemoriesService } from '../memories/memories.service.js';
import { MAX_RECALL, RECALL_MAX_DEPTH } from './dto/recall.args.js';
import { mergeRankings } from './fusion.js';
import { HybridSearchService } from './hybrid-search.service.js';
import { QueryRewriterService } from './query-rewriter.service.js';
import { encodeCursor, decodeCursor } from '../common/pagination/connection.js';
import type { ContextSourceType } from '../context/context.types.js';
import type { RecallConnectionModel, RecallHit } from './models/recall.model.js';
import { RetrievalMetricsService } from './retrieval-metrics.service.js';
import { SearchContextService } from './search-context.service.js';
import { SearchErrorCode, SearchException } from './search.exception.js';
import type { Ranked } from './search.types.js';
import { parseRecallId, recallId } from './recall-id.js';

const RECALL_DEFAULT = 10;
const FORGETTABLE_TYPES = new Set(['MEMORY', 'FACT']);

/**
 * A source of recall items that another module owns (period summaries, stories): registered
 * from that module's onModuleInit, so search does not depend on it.
 */
export interface RecallSource {
  readonly sourceType: string;
  /** Items that answer the question before the search's own, best first (none by default). */
  collect?(
    user: UserEntity,
    legacyId: string,
    query: string,
    clock: Date,
    /** The question's vector, made once for the search and every source that wants it. */
    queryVector: () => Promise<QueryVector | null>,
  ): Promise<RecallHit[]>;
  /** Whether the viewer may forget this item of the search's results from recall. */
  forgettable?(user: UserEntity, item: Ranked): boolean;
  /**
   * Deletes the viewer's own item (NOT_FOUND when they cannot see it). Unless `confirmed`, an
   * item whose deletion takes more than itself only says what would go.
   */
  forget(user: UserEntity, id: string, confirmed: boolean): Promise<ForgetOutcome>;
  /**
   * For a source whose recall ids are not `<TYPE>:<uuid>` (the profile's `profile:<field>`):
   * its own id in such a recall id, or null when the id is not one of its.
   */
  parseId?(recallId: string): string | null;
}

export interface ForgetOutcome {
  forgotten: boolean;
  /** What forgetting it deletes, when that waits for confirmation. */
  wouldDelete?: string | null;
}

/** Another module's NOT_FOUND becomes this module's, so that recall ids reveal nothing more. */
function notFoundAsRecall(err: unknown): never {
  if (err instanceof DomainException && err.publicCode === PublicErrorCode.NOT_FOUND) {
    throw SearchException.recallItemNotFound();
  }
  throw err;
}

function query(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) {
    throw new SearchException(SearchErrorCode.INVALID_QUERY, 'The query cannot be blank.', 'query');
  }
  return trimmed;
}

/**
 * Recall with forgetting: what Keepsake remembers about something across the user's memories,
 * the facts they may see and their conversations, for legacy members only.
 */
@Injectable()
export class SearchService {
  private readonly logger = new Logger('Search');
  private readonly sources: RecallSource[] = [];

  constructor(
    private readonly legacies: LegaciesService,
    private readonly search: HybridSearchService,
    private readonly searchContext: SearchContextService,
    private readonly metrics: RetrievalMetricsService,
    private readonly memories: MemoriesService,
    private readonly facts: FactsService,
    private readonly embeddings: EmbeddingService,
    private readonly rewriter: QueryRewriterService,
    private readonly reads: DatabaseReads,
  ) {}

  registerSource(source: RecallSource): void {
    this.sources.push(source);
  }

  /** A recall id in a registered source's own form. */
  private parseSourceId(value: string): { sourceType: string; id: string } | null {
    for (const source of this.sources) {
      const id = source.parseId?.(value.trim());
      if (id) return { sourceType: source.sourceType, id };
    }
    return null;
  }

  /**
   * "What do you remember about X?": the user's memories, the legacy's facts they may see, and
   * their conversations' summaries and turns, best first. Turns come back once per turn (its
   * best chunk). Each item says whether it can be forgotten from here. Every read of one recall
   * goes to one server, chosen once (database-reads.ts).
   */
  recall(
    user: UserEntity,
    legacyId: string,
    text: string,
    first?: number | null,
  ): Promise<RecallHit[]> {
    return this.reads.scope(() => this.recallOnce(user, legacyId, text, first));
  }

  private async recallOnce(
    user: UserEntity,
    legacyId: string,
    text: string,
    first?: number | null,
  ): Promise<RecallHit[]> {
    return (await this.ranked(user, legacyId, text, Math.min(first ?? RECALL_DEFAULT, MAX_RECALL)))
      .hits;
  }

  /**
   * One page of a recall, as a connection: the cursor is the position in the ranking, which is
   * asked again (to that depth) for each page.
   */
  async recallPage(
    user: UserEntity,
    legacyId: string,
    text: string,
    first?: number | null,
    after?: string | null,
  ): Promise<RecallConnectionModel> {
    const offset = after ? decodeCursor(after, 'after', 1)[0] : 0;
    if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) {
      throw new CommonException(
        CommonErrorCode.INVALID_CURSOR,
        'The cursor is not valid.',
        'after',
      );
    }
    const size = Math.min(first ?? RECALL_DEFAULT, MAX_RECALL);
    const depth = Math.min(offset + size + 1, RECALL_MAX_DEPTH);
    const { hits } = await this.ranked(user, legacyId, text, depth);
    const page = hits.slice(offset, offset + size);
    const edges = page.map((hit, i) => ({
      cursor: encodeCursor([offset + i + 1]),
      node: hit.item,
      score: finite(hit.score),
      scores: hit.scores,
    }));
    return {
      edges,
      pageInfo: {
        hasNextPage: hits.length > offset + size,
        hasPreviousPage: offset > 0,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges[edges.length - 1]?.cursor ?? null,
      },
    };
  }

  private async ranked(
    user: UserEntity,
    legacyId: string,
    text: string,
    limit: number,
  ): Promise<{ hits: RecallHit[] }> {
    await this.legacies.requireMember(user.id, legacyId);
    const started = performance.now();
    const clock = await this.search.legacyClock(user.id, legacyId);
    const trimmed = query(text);
    const rewrite = await this.rewriter.rewrite(user.id, legacyId, trimmed);
    // A hypothetical answer sits nearer the turns that answer than the question does.
    const embedded = rewrite?.answer ? `${trimmed}\n${rewrite.answer}` : trimmed;
    let vector: Promise<QueryVector | null> | undefined;
    const queryVector = () => (vector ??= this.embeddings.embedQuery(embedded));
    const searchFor = (q: string, shared?: () => Promise<QueryVector | null>) =>
      this.search.search({
        user,
        legacyId,
        conversationId: null,
        query: q,
        clock,
        queryVector: shared,
      });
    const [outcome, parts, ...extra] = await Promise.all([
      searchFor(trimmed, queryVector),
      Promise.all((rewrite?.subQuestions ?? []).map((q) => searchFor(q))),
      // A failing source costs its items, never the recall.
      ...this.sources.map((s) =>
        (s.collect?.(user, legacyId, trimmed, clock, queryVector) ?? Promise.resolve([])).catch(
          (err: unknown) => {
            this.logger.warn({
              msg: 'recall source failed',
              source: s.sourceType,
              error: String(err),
            });
            return [];
          },
        ),
      ),
    ]);
    const leading = extra.flat().slice(0, limit);
    const seenTurns = new Set<string>();
    const picked: Ranked[] = [];
    const ranked =
      parts.length > 0
        ? mergeRankings([outcome.ranked, ...parts.map((p) => p.ranked)])
        : outcome.ranked;
    for (const r of ranked) {
      if (picked.length + leading.length >= limit) break;
      if (r.kind === 'segment') {
        if (seenTurns.has(r.messageId!)) continue;
        seenTurns.add(r.messageId!);
      }
      picked.push(r);
    }
    const items = await this.searchContext.toItems(user.id, user.timezone, picked);
    const hits: RecallHit[] = [
      ...leading,
      ...items.map((item, i) => ({
        item: {
          id: recallId(item.sourceType, item.id),
          sourceType: item.sourceType,
          sourceId: item.id,
          text: picked[i].text,
          forgettable:
            item.sourceType === 'MEMORY' ||
            (item.sourceType === 'FACT' && picked[i].ownerId === user.id) ||
            this.sources.some(
              (s) => s.sourceType === item.sourceType && s.forgettable?.(user, picked[i]) === true,
            ),
          provenance: item.provenance,
        },
        score: item.score,
        scores: scoreList(item.scores),
      })),
    ];
    await this.metrics.recall(
      user,
      legacyId,
      outcome,
      hits.map((h) => h.item),
      performance.now() - started,
    );
    return { hits };
  }

  /**
   * Forgets a recall result: a memory is forgotten (restorable during the undo window), a fact
   * is deleted if the user wrote it. Summaries and turns cannot be forgotten one by one.
   */
  async forget(
    user: UserEntity,
    id: string,
    confirmed = false,
  ): Promise<{
    recallItemId: string;
    sourceType: ContextSourceType;
    forgotten: boolean;
    requiresConfirmation: boolean;
    wouldDelete: string | null;
  }> {
    const parsed = parseRecallId(id) ?? this.parseSourceId(id);
    if (!parsed) throw SearchException.recallItemNotFound();
    if (
      !FORGETTABLE_TYPES.has(parsed.sourceType) &&
      !this.sources.some((s) => s.sourceType === parsed.sourceType)
    ) {
      throw new SearchException(
        SearchErrorCode.NOT_FORGETTABLE,
        'Summaries and turns are part of the conversation log and cannot be forgotten one by one; delete the conversation instead.',
        'id',
      );
    }
    const source = this.sources.find((s) => s.sourceType === parsed.sourceType);
    if (source) {
      const outcome = await source.forget(user, parsed.id, confirmed).catch(notFoundAsRecall);
      return {
        recallItemId: recallId(parsed.sourceType, parsed.id),
        sourceType: parsed.sourceType as ContextSourceType,
        forgotten: outcome.forgotten,
        requiresConfirmation: !outcome.forgotten,
        wouldDelete: outcome.wouldDelete ?? null,
      };
    } else if (parsed.sourceType === 'MEMORY') {
      await this.memories.forget(user, parsed.id).catch(notFoundAsRecall);
    } else {
      const fact = await this.facts.getVisible(user, parsed.id).catch(notFoundAsRecall);
      if (fact.authorId !== user.id) {
        throw new SearchException(
          SearchErrorCode.NOT_FACT_AUTHOR,
          'Only the member who wrote a fact can forget it.',
        );
      }
      await this.facts.delete(user, parsed.id);
    }
    return {
      recallItemId: recallId(parsed.sourceType, parsed.id),
      sourceType: parsed.sourceType as ContextSourceType,
      forgotten: true,
      requiresConfirmation: false,
      wouldDelete: null,
    };
  }
}
