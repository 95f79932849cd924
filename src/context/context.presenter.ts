import { Injectable } from '@nestjs/common';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import type { UserEntity } from '../identity/user.entity.js';
import type { SearchOutcome } from '../search/hybrid-search.service.js';
import type { PathHit, PathName } from '../search/search.types.js';
import { HybridSearchService } from '../search/hybrid-search.service.js';
import { SearchContextService, SOURCE_TYPES } from '../search/search-context.service.js';
import { recallId } from '../search/recall-id.js';
import { SECTION_TITLES } from './context-assembler.service.js';
import type { AssembledContext, ContextItem, ContextSectionName } from './context.types.js';
import type {
  AssembledContextModel,
  ContextItemModel,
  ScoreComponentModel,
} from './models/context.model.js';
import type {
  RetrievalCandidateModel,
  RetrievalDebugModel,
} from './models/retrieval-debug.model.js';

/**
 * A number as clients read it: GraphQL's Float has no -Infinity or NaN, and one that reached a
 * response failed the whole query. Ranking keeps its numbers finite; this keeps a slip from
 * costing the answer.
 */
export function finite(value: number): number {
  return Number.isFinite(value) ? value : 0;
}

export function scoreList(scores: Record<string, number>): ScoreComponentModel[] {
  return Object.entries(scores).map(([name, value]) => ({ name, value: finite(value) }));
}

function toItemModel(item: ContextItem, section: ContextSectionName): ContextItemModel {
  return {
    sourceType: item.sourceType,
    recallItemId: recallId(item.sourceType, item.id),
    sourceId: item.id,
    section,
    text: item.text,
    tokens: item.tokens,
    score: finite(item.score),
    scores: scoreList(item.scores),
    isCode: item.isCode ?? false,
    provenance: item.provenance,
  };
}

/** An assembled context as the `context` and `retrievalDebug` queries show it. */
@Injectable()
export class ContextPresenter {
  constructor(
    private readonly search: HybridSearchService,
    private readonly searchContext: SearchContextService,
  ) {}

  toContextModel(context: AssembledContext, legacyName: string): AssembledContextModel {
    const sections = context.sections.map((s) => ({
      name: s.name,
      title: SECTION_TITLES[s.name](legacyName),
      tokens: s.tokens,
      items: s.items.map((i) => toItemModel(i, s.name)),
    }));
    return {
      persona: context.persona,
      system: context.system,
      sections,
      items: sections.flatMap((s) => s.items),
      tokenCount: context.tokenCount,
      budget: context.budget,
      truncated: context.truncated,
      recent: context.recent,
    };
  }

  async toDebugModel(
    owner: UserEntity,
    conversation: ConversationEntity,
    text: string,
    context: AssembledContext,
    outcome: SearchOutcome | undefined,
  ): Promise<RetrievalDebugModel> {
    const placed = new Map<string, { item: ContextItem; section: ContextSectionName }>();
    for (const s of context.sections)
      for (const item of s.items)
        placed.set(`${item.sourceType}:${item.id}`, { item, section: s.name });
    const dropped = new Map(context.dropped.map((d) => [`${d.item.sourceType}:${d.item.id}`, d]));
    const candidates: RetrievalCandidateModel[] = [];
    const seen = new Set<string>();
    const ranked = outcome?.ranked ?? [];
    const items = await this.searchContext.toItems(owner.id, owner.timezone, ranked, {
      currentConversationId: conversation.id,
    });
    ranked.forEach((r, i) => {
      const key = `${SOURCE_TYPES[r.kind]}:${r.id}`;
      seen.add(key);
      const kept = placed.get(key);
      const drop = dropped.get(key);
      candidates.push({
        sourceType: SOURCE_TYPES[r.kind],
        recallItemId: recallId(SOURCE_TYPES[r.kind], r.id),
        sourceId: r.id,
        scope: r.scope,
        paths: (Object.entries(r.paths) as [PathName, PathHit][]).map(([path, hit]) => ({
          path,
          score: finite(hit.score),
          rank: hit.rank,
          raw: hit.raw === undefined || !Number.isFinite(hit.raw) ? null : hit.raw,
        })),
        scores: scoreList({ ...r.components, final: r.score }),
        score: finite(r.score),
        good: r.good,
        kept: kept !== undefined,
        section: kept?.section ?? drop?.section ?? null,
        reason: kept
          ? `kept in ${kept.section}`
          : drop
            ? drop.reason
            : r.kind === 'fact' || r.kind === 'memory'
              ? `not chosen by the ${r.kind === 'fact' ? 'facts' : 'memories'} section, which ranks its own candidates`
              : `below the best ${r.kind === 'segment' ? 'turns' : 'summaries'} offered to the context`,
        text: items[i].text,
        tokens: items[i].tokens,
        provenance: items[i].provenance,
      });
    });
    // Items the facts and memories sections found on their own.
    for (const s of context.sections) {
      for (const item of s.items) {
        const key = `${item.sourceType}:${item.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        candidates.push(this.providerCandidate(item, s.name, true, `kept in ${s.name}`));
      }
    }
    for (const d of context.dropped) {
      const key = `${d.item.sourceType}:${d.item.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      candidates.push(this.providerCandidate(d.item, d.section, false, d.reason));
    }
    const f = outcome?.features;
    return {
      query: text,
      identifiers: f?.identifiers ?? [],
      codeQuery: f?.code ?? false,
      refersBack: f?.refersBack ?? false,
      asksSummary: f?.asksSummary ?? false,
      timeExpression: f?.timeRange?.expression ?? null,
      timeFrom: f?.timeRange?.from ?? null,
      timeTo: f?.timeRange?.to ?? null,
      clock: f?.clock ?? new Date(),
      fusion: outcome?.settings.fusion ?? this.search.settings().fusion,
      hybrid: outcome?.settings.hybrid ?? this.search.settings().hybrid,
      goodHits: outcome?.goodHits ?? 0,
      widened: outcome?.widened ?? false,
      widenReason: outcome?.widenReason ?? null,
      fallback: outcome?.fallback ?? false,
      degraded: outcome?.degraded ?? [],
      failedStage:
        outcome?.failedStage ??
        (context.failures?.[0] ? `provider:${context.failures[0].section}` : null),
      embedMs: outcome?.embedMs ?? 0,
      searchMs: outcome?.searchMs ?? 0,
      totalMs: context.totalMs ?? 0,
      tokenCount: context.tokenCount,
      budget: context.budget,
      truncated: context.truncated,
      candidates,
    };
  }

  private providerCandidate(
    item: ContextItem,
    section: ContextSectionName,
    kept: boolean,
    reason: string,
  ): RetrievalCandidateModel {
    return {
      sourceType: item.sourceType,
      recallItemId: recallId(item.sourceType, item.id),
      sourceId: item.id,
      scope: 'provider',
      paths: [],
      scores: scoreList(item.scores),
      score: finite(item.score),
      good: false,
      kept,
      section,
      reason,
      text: item.text,
      tokens: item.tokens,
      provenance: item.provenance,
    };
  }
}
