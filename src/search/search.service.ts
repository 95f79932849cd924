import { Injectable } from '@nestjs/common';
import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';
import { ContextAssembler, SECTION_TITLES } from '../context/context-assembler.service.js';
import type {
  AssembledContext,
  ContextItem,
  ContextSectionName,
} from '../context/context.types.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import { FactsService } from '../facts/facts.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { UsersService } from '../identity/users.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import { MemoriesService } from '../memories/memories.service.js';
import { MAX_RECALL } from './dto/search.args.js';
import { HybridSearchService, SearchOutcome } from './hybrid-search.service.js';
import { MetricsRepository } from './metrics.repository.js';
import { RetrievalMetrics } from './metrics.service.js';
import type {
  AssembledContextModel,
  ContextItemModel,
  MemoryMetricsReportModel,
  RecallItemModel,
  RetrievalCandidateModel,
  RetrievalDebugModel,
  ScoreComponentModel,
} from './models/search.model.js';
import { SEARCH_OUTCOME, SearchContext, SOURCE_TYPES } from './search-context.service.js';
import { SearchErrorCode, SearchException } from './search.exception.js';
import type { Ranked } from './search.types.js';

const RECALL_DEFAULT = 10;
const FORGETTABLE_TYPES = new Set(['MEMORY', 'FACT']);

function scoreList(scores: Record<string, number>): ScoreComponentModel[] {
  return Object.entries(scores).map(([name, value]) => ({ name, value }));
}

function toItemModel(item: ContextItem, section: string): ContextItemModel {
  return {
    sourceType: item.sourceType,
    id: item.id,
    section,
    text: item.text,
    tokens: item.tokens,
    score: item.score,
    scores: scoreList(item.scores),
    isCode: item.isCode ?? false,
    provenance: item.provenance,
  };
}

/** A recall id: the source type and its id, so that forgetting knows where to go. */
export function recallId(sourceType: string, id: string): string {
  return `${sourceType}:${id}`;
}

export function parseRecallId(value: string): { sourceType: string; id: string } | null {
  const m =
    /^(FACT|MEMORY|SUMMARY|TURN):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(
      value.trim(),
    );
  return m ? { sourceType: m[1].toUpperCase(), id: m[2].toLowerCase() } : null;
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
 * The retrieval operations clients call: `context` (what the agent would be given), `recall`
 * with forgetting, the debug view and the metrics report. Authorization happens here: the
 * conversation's owner (or, for the debug view, a platform admin) and legacy members only.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly assembler: ContextAssembler,
    private readonly conversations: ConversationsService,
    private readonly legacies: LegaciesService,
    private readonly legacyRepo: LegacyRepository,
    private readonly users: UsersService,
    private readonly search: HybridSearchService,
    private readonly searchContext: SearchContext,
    private readonly metrics: RetrievalMetrics,
    private readonly metricsRepo: MetricsRepository,
    private readonly memories: MemoriesService,
    private readonly facts: FactsService,
  ) {}

  async context(
    user: UserEntity,
    conversationId: string,
    text: string,
    budget?: number | null,
  ): Promise<AssembledContextModel> {
    const conversation = await this.conversations.getOwned(user, conversationId);
    const assembled = await this.assemble(user, conversation, query(text), 'CONTEXT', budget);
    return this.toContextModel(assembled.context, assembled.legacyName);
  }

  private async assemble(
    user: UserEntity,
    conversation: ConversationEntity,
    text: string,
    purpose: 'CONTEXT' | 'DEBUG',
    budget?: number | null,
    shared?: Map<string, unknown>,
  ) {
    const legacy = await this.legacyRepo.findById(conversation.legacyId);
    if (!legacy)
      throw new SearchException(SearchErrorCode.CONVERSATION_NOT_FOUND, 'Conversation not found.');
    const context = await this.assembler.assemble({
      user,
      conversation,
      legacy,
      query: text,
      budget,
      purpose,
      shared,
    });
    return { context, legacyName: legacy.name };
  }

  private toContextModel(context: AssembledContext, legacyName: string): AssembledContextModel {
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

  /**
   * "What do you remember about X?": the user's memories, the legacy's facts they may see, and
   * their conversations' summaries and turns, best first. Turns come back once per turn (its
   * best chunk). Each item says whether it can be forgotten from here.
   */
  async recall(
    user: UserEntity,
    legacyId: string,
    text: string,
    first?: number | null,
  ): Promise<RecallItemModel[]> {
    await this.legacies.requireMember(user.id, legacyId);
    const started = performance.now();
    const limit = Math.min(first ?? RECALL_DEFAULT, MAX_RECALL);
    const outcome = await this.search.search({
      user,
      legacyId,
      conversationId: null,
      query: query(text),
      clock: await this.search.legacyClock(user.id, legacyId),
    });
    const seenTurns = new Set<string>();
    const picked: Ranked[] = [];
    for (const r of outcome.ranked) {
      if (r.kind === 'segment') {
        if (seenTurns.has(r.messageId!)) continue;
        seenTurns.add(r.messageId!);
      }
      picked.push(r);
      if (picked.length >= limit) break;
    }
    const items = await this.searchContext.toItems(user.id, user.timezone, picked);
    const result = items.map((item, i) => ({
      id: recallId(item.sourceType, item.id),
      sourceType: item.sourceType,
      sourceId: item.id,
      text: picked[i].text,
      score: item.score,
      scores: scoreList(item.scores),
      forgettable:
        item.sourceType === 'MEMORY' ||
        (item.sourceType === 'FACT' && picked[i].ownerId === user.id),
      provenance: item.provenance,
    }));
    await this.metrics.recall(user, legacyId, outcome, result, performance.now() - started);
    return result;
  }

  /**
   * Forgets a recall result: a memory is forgotten (restorable during the undo window), a fact
   * is deleted if the user wrote it. Summaries and turns cannot be forgotten one by one.
   */
  async forget(
    user: UserEntity,
    id: string,
  ): Promise<{ id: string; sourceType: string; forgotten: boolean }> {
    const parsed = parseRecallId(id);
    if (!parsed) throw SearchException.recallItemNotFound();
    if (!FORGETTABLE_TYPES.has(parsed.sourceType)) {
      throw new SearchException(
        SearchErrorCode.NOT_FORGETTABLE,
        'Summaries and turns are part of the conversation log and cannot be forgotten one by one; delete the conversation instead.',
        'id',
      );
    }
    if (parsed.sourceType === 'MEMORY') {
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
      id: recallId(parsed.sourceType, parsed.id),
      sourceType: parsed.sourceType,
      forgotten: true,
    };
  }

  /**
   * Every candidate of the retrieval for this message with all its scores, and whether it
   * was kept or dropped and why. The conversation's owner, or a platform admin (who then
   * sees what the owner's agent would see).
   */
  async debug(
    user: UserEntity,
    conversationId: string,
    text: string,
  ): Promise<RetrievalDebugModel> {
    const conversation = await this.debuggable(user, conversationId);
    const owner =
      conversation.userId === user.id
        ? user
        : (await this.users.findByIds([conversation.userId]))[0];
    if (!owner)
      throw new SearchException(SearchErrorCode.CONVERSATION_NOT_FOUND, 'Conversation not found.');
    const shared = new Map<string, unknown>();
    const { context } = await this.assemble(
      owner,
      conversation,
      query(text),
      'DEBUG',
      null,
      shared,
    );
    const outcome = shared.get(SEARCH_OUTCOME) as SearchOutcome | undefined;
    return this.toDebugModel(owner, conversation, text, context, outcome);
  }

  private async debuggable(user: UserEntity, conversationId: string): Promise<ConversationEntity> {
    if (!user.isPlatformAdmin) return this.conversations.getOwned(user, conversationId);
    const [conversation] = await this.conversations.findByIds([conversationId]);
    if (!conversation) {
      throw new SearchException(SearchErrorCode.CONVERSATION_NOT_FOUND, 'Conversation not found.');
    }
    return conversation;
  }

  private async toDebugModel(
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
        id: r.id,
        scope: r.scope,
        paths: Object.entries(r.paths).map(([path, hit]) => ({
          path,
          score: hit!.score,
          rank: hit!.rank,
          raw: hit!.raw ?? null,
        })),
        scores: scoreList({ ...r.components, final: r.score }),
        score: r.score,
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
      id: item.id,
      scope: 'provider',
      paths: [],
      scores: scoreList(item.scores),
      score: item.score,
      good: false,
      kept,
      section,
      reason,
      text: item.text,
      tokens: item.tokens,
      provenance: item.provenance,
    };
  }

  async report(from: Date, to: Date): Promise<MemoryMetricsReportModel> {
    if (!(from < to)) {
      throw new SearchException(
        SearchErrorCode.INVALID_PERIOD,
        '`from` must be before `to`.',
        'to',
      );
    }
    const a = await this.metricsRepo.aggregate(from, to);
    const totalItems = a.composition.reduce((sum, c) => sum + c.items, 0);
    return {
      from,
      to,
      ...a,
      hitsByPath: Object.entries(a.hitsByPath).map(([path, hits]) => ({ path, hits })),
      composition: a.composition.map((c) => ({
        sourceType: c.source,
        items: c.items,
        share: totalItems > 0 ? c.items / totalItems : 0,
      })),
    };
  }
}
