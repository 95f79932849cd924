import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSourceType,
  Provenance,
} from '../context/context.types.js';
import { countTokens, truncateToTokens } from '../llm/tokenizer.js';
import { HybridSearchService, SearchOutcome } from './hybrid-search.service.js';
import { CandidateRepository } from './candidate.repository.js';
import type { Ranked, SourceKind } from './search.types.js';
import { localDate } from './local-calendar.js';
import { seesSources } from '../facts/fact-visibility.js';
import { markedName } from '../identity/display-name.js';
import { quoted } from '../context/quoted.js';

export const SOURCE_TYPES: Record<SourceKind, ContextSourceType> = {
  segment: 'TURN',
  summary: 'SUMMARY',
  fact: 'FACT',
  memory: 'MEMORY',
  story: 'STORY',
};

/** The key under which an assembly's search outcome is left in `request.shared`. */
export const SEARCH_OUTCOME = 'search.outcome';

function isoDay(date: Date | null, timeZone: string): string {
  if (!date) return '';
  try {
    const d = localDate(date, timeZone);
    return `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
  } catch {
    return date.toISOString().slice(0, 10);
  }
}

/**
 * Prose longer than the cap is cut after its last whole sentence that fits (words as a last
 * resort) and marked; code is never cut.
 */
export function capText(text: string, maxTokens: number): string {
  if (countTokens(text) <= maxTokens) return text;
  const room = maxTokens - 2;
  const sentences = text.match(/[^.!?。！？]+(?:[.!?。！？]+["'”’)\]]*\s*|$)/g) ?? [text];
  let kept = '';
  for (const sentence of sentences) {
    if (countTokens(kept + sentence) > room) break;
    kept += sentence;
  }
  if (kept.trim().length === 0) {
    const cut = truncateToTokens(text, room);
    const space = cut.lastIndexOf(' ');
    kept = space > cut.length / 2 ? cut.slice(0, space) : cut;
  }
  return `${kept.trimEnd()} […]`;
}

/**
 * One hybrid search per context assembly, shared by the turns and summaries sections, with
 * items rendered for the model and traced to their source turns.
 */
@Injectable()
export class SearchContextService {
  private readonly outcomes = new WeakMap<ContextRequest, Promise<SearchOutcome>>();

  constructor(
    private readonly search: HybridSearchService,
    private readonly candidates: CandidateRepository,
    private readonly config: AppConfig,
  ) {}

  /** The search for this assembly (run once, whichever section asks first). */
  outcomeFor(request: ContextRequest): Promise<SearchOutcome> {
    let outcome = this.outcomes.get(request);
    if (!outcome) {
      outcome = this.search.search({
        user: request.user,
        legacyId: request.legacy.id,
        conversationId: request.conversation.id,
        beforeTurn: request.recentStartTurn,
        query: request.query,
        clock: request.clock ?? request.now,
        queryVector: request.queryVector,
        queryVectorMs: request.queryVectorMs,
        // Facts and memories have sections of their own, ranked with the same query vector:
        // searching them here too would find what those sections already weigh, then drop it.
        // Stories are searched here, for the stories section.
        widenKinds: ['segment', 'summary', 'story'],
      });
      this.outcomes.set(request, outcome);
      void outcome.then(
        (o) => request.shared?.set(SEARCH_OUTCOME, o),
        () => undefined,
      );
    }
    return outcome;
  }

  /** The outcome of an assembly's search, if one ran. */
  outcomeOf(request: ContextRequest): Promise<SearchOutcome> | undefined {
    return this.outcomes.get(request);
  }

  /** Ranked candidates as context items with provenance, best first. */
  async toItems(
    userId: string,
    timeZone: string,
    ranked: Ranked[],
    options: { turnMaxTokens?: number; currentConversationId?: string | null } = {},
  ): Promise<ContextItem[]> {
    if (ranked.length === 0) return [];
    const messages = await this.candidates.provenanceMessages(userId, {
      messageIds: [
        ...new Set(
          ranked.flatMap((r) => [
            ...(r.kind === 'segment' || r.kind === 'memory' ? [r.messageId] : []),
            ...(r.kind === 'fact' ? r.sourceMessageIds : []),
          ]),
        ),
      ].filter((id): id is string => !!id),
      ranges: ranked
        .filter((r) => r.kind === 'summary' && r.conversationId !== null)
        .map((r) => ({ conversationId: r.conversationId!, start: r.turnStart!, end: r.turnEnd! })),
    });
    const byId = new Map(messages.map((m) => [m.id, m]));
    return ranked.map((r) => {
      const own = r.kind !== 'fact' || seesSources({ authorId: r.ownerId ?? '' }, userId);
      const cited =
        r.kind === 'summary'
          ? messages.filter(
              (m) =>
                m.conversationId === r.conversationId &&
                m.turnIndex >= r.turnStart! &&
                m.turnIndex <= r.turnEnd!,
            )
          : (r.kind === 'fact' ? (own ? r.sourceMessageIds : []) : [r.messageId])
              .map((id) => (id ? byId.get(id) : undefined))
              .filter((m): m is NonNullable<typeof m> => m !== undefined);
      const provenance: Provenance = {
        sourceType: SOURCE_TYPES[r.kind],
        sourceId: r.id,
        // Another member's fact does not say which of their conversations it came from.
        conversationId: own ? r.conversationId : null,
        messageIds: cited.map((m) => m.id),
        messageMetadata: cited.map((m) => m.metadata ?? {}),
        turnRange:
          own && r.turnStart !== null && r.turnEnd !== null
            ? { start: r.turnStart, end: r.turnEnd }
            : null,
        occurredAt: r.occurredTo ?? r.occurredFrom,
        createdAt: r.createdAt,
        story: r.kind === 'story' ? (r.story ?? null) : null,
      };
      const text = this.render(r, userId, timeZone, options);
      return {
        sourceType: SOURCE_TYPES[r.kind],
        id: r.id,
        text,
        tokens: countTokens(text),
        score: r.score,
        scores: { ...r.components, final: r.score },
        provenance,
        isCode: r.isCode,
      };
    });
  }

  private render(
    r: Ranked,
    viewerId: string,
    timeZone: string,
    options: { turnMaxTokens?: number; currentConversationId?: string | null },
  ): string {
    const elsewhere =
      options.currentConversationId && r.conversationId !== options.currentConversationId
        ? ' (another conversation)'
        : '';
    switch (r.kind) {
      case 'segment': {
        // An imported turn's speaker is a name the import chose: marked as one.
        const who = r.speaker
          ? markedName(r.speaker, 'User')
          : r.label === 'ASSISTANT'
            ? 'Assistant'
            : 'User';
        const body = r.isCode
          ? r.text
          : capText(r.text, options.turnMaxTokens ?? this.config.env.SEARCH_TURN_MAX_TOKENS);
        const caption = r.caption ? ` [image: ${r.caption}]` : '';
        return `- [${isoDay(r.occurredFrom, timeZone)}${elsewhere}] ${who}: ${body}${caption}`;
      }
      case 'summary': {
        const from = isoDay(r.occurredFrom, timeZone);
        const to = isoDay(r.occurredTo, timeZone);
        return `- [${from === to ? from : `${from} to ${to}`}${elsewhere}] ${r.text}`;
      }
      case 'fact':
        return `- [${(r.category ?? 'fact').toLowerCase()}] ${r.text}`;
      case 'memory':
        return `- [${(r.label ?? 'memory').toLowerCase()}] ${r.text}`;
      case 'story': {
        const where = r.story ? `${quoted(r.story.title)}, p. ${r.story.page}` : 'story';
        const passage = capText(
          r.text,
          options.turnMaxTokens ?? this.config.env.SEARCH_TURN_MAX_TOKENS * 2,
        );
        // Another member's story is their words: quoted data, as their shared facts are.
        return `- [${where}] ${r.ownerId === viewerId ? passage : quoted(passage)}`;
      }
    }
  }
}
