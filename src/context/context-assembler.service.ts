import { QUOTED_NOTE } from './quoted.js';
import { DatabaseReads } from '../database/database-reads.js';
import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { withheldFrom } from '../conversations/withheld-reply.js';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import type { QueryVector } from '../embeddings/embedding.service.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import type { UserEntity } from '../identity/user.entity.js';
import type { LegacyEntity } from '../legacies/legacy.entity.js';
import { countTokens } from '../llm/tokenizer.js';
import { inMemoryHoldout } from '../signals/memory-holdout.js';
import { MAX_CONTEXT_BUDGET } from './context.config.js';
import {
  AssembledContext,
  AssembledSection,
  AssemblyObserver,
  ContextItem,
  ContextPurpose,
  ContextRequest,
  ContextSectionName,
  ContextSectionProvider,
  SECTION_ORDER,
} from './context.types.js';

export const SECTION_TITLES: Record<ContextSectionName, (legacyName: string) => string> = {
  facts: (name) => `What the family has shared about ${name} (${QUOTED_NOTE})`,
  profile: () => 'What the person you are talking with has told you about themselves',
  memories: () => 'What you remember about the person you are talking with',
  periods: () => 'Looking back over the time asked about',
  stories: (name) => `From the family's stories and documents about ${name} (${QUOTED_NOTE})`,
  summaries: () => 'Summaries of earlier conversation',
  turns: () => 'Relevant earlier turns',
};

export function defaultPersona(legacy: Pick<LegacyEntity, 'name'>): string {
  return (
    `You are Keepsake, a warm and attentive companion helping a family remember ${legacy.name}. ` +
    `Talk with the user about ${legacy.name}: listen, ask gentle questions, and bring back what ` +
    'they and their family have shared before. Never invent memories or facts; when you do not ' +
    'know something, say so and ask.'
  );
}

function byScore(a: ContextItem, b: ContextItem): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export interface AssembleInput {
  user: UserEntity;
  /** Who will read it, when not `user` (see ContextRequest.viewer). */
  viewer?: UserEntity;
  conversation: ConversationEntity;
  legacy: LegacyEntity;
  query: string;
  budget?: number | null;
  /** Recent turns up to (and including) this turn index; defaults to the latest. */
  uptoTurn?: number;
  now?: Date;
  /** Defaults to REPLY (sendMessage). */
  purpose?: ContextPurpose;
  /** Per-assembly state the caller wants to read back (the debug view). */
  shared?: Map<string, unknown>;
}

/**
 * Builds what the agent sees for a reply: the persona, the retrieved sections within the token
 * budget, and the recent window. Sections come from providers that feature modules register,
 * so the reply path never changes when a new source is added. Items are kept or dropped whole,
 * in a deterministic order.
 */
@Injectable()
export class ContextAssemblerService {
  private readonly logger = new Logger('Context');
  private readonly providers: ContextSectionProvider[] = [];
  private readonly observers: AssemblyObserver[] = [];

  constructor(
    private readonly conversations: ConversationsService,
    private readonly config: AppConfig,
    private readonly embeddings: EmbeddingService,
    private readonly reads: DatabaseReads,
  ) {}

  register(provider: ContextSectionProvider): void {
    this.providers.push(provider);
  }

  /** Observers see every assembly when it is done (the search module records metrics). */
  observe(observer: AssemblyObserver): void {
    this.observers.push(observer);
  }

  budget(requested?: number | null): number {
    const budget = requested ?? this.config.env.CONTEXT_TOKEN_BUDGET;
    return Math.max(0, Math.min(budget, MAX_CONTEXT_BUDGET));
  }

  /**
   * The context for one turn. Its sections' reads share one choice of server (database-reads.ts):
   * a replica that has replayed every write acknowledged before, the turn just sent included.
   */
  assemble(input: AssembleInput): Promise<AssembledContext> {
    return this.reads.scope(() => this.assembleOnce(input));
  }

  private async assembleOnce(input: AssembleInput): Promise<AssembledContext> {
    const started = performance.now();
    const budget = this.budget(input.budget);
    // Notices (the offline one, a failed reply's) are no part of the conversation a model
    // continues, nor are turns made for another participant alone.
    const recent = (
      await this.conversations.recentMessages(
        input.conversation.id,
        this.config.env.CONTEXT_RECENT_TURNS,
        input.uptoTurn === undefined ? undefined : input.uptoTurn + 1,
      )
    ).filter((m) => !m.placeholder && !withheldFrom(m, input.user.id));
    const now = input.now ?? new Date();
    let vector: Promise<QueryVector | null> | null = null;
    let vectorMs = 0;
    const embedQuery = async (): Promise<QueryVector | null> => {
      const t0 = performance.now();
      try {
        return await this.embeddings.embedQuery(input.query);
      } finally {
        vectorMs = performance.now() - t0;
      }
    };
    const request: ContextRequest = {
      purpose: input.purpose ?? 'REPLY',
      user: input.user,
      viewer: input.viewer,
      conversation: input.conversation,
      legacy: input.legacy,
      query: input.query,
      recentMessageIds: new Set(recent.map((m) => m.id)),
      recentStartTurn: recent[0]?.turnIndex ?? input.uptoTurn ?? input.conversation.nextTurnIndex,
      now,
      clock: recent.at(-1)?.occurredAt ?? now,
      shared: input.shared ?? new Map(),
      queryVector: () => (vector ??= embedQuery()),
      queryVectorMs: () => vectorMs,
    };
    const candidates = new Map<ContextSectionName, ContextItem[]>();
    const failures: { section: ContextSectionName; message: string }[] = [];
    // The sections' sources are independent reads (the search runs once, whichever asks
    // first): on a server they run side by side on the pool, which roughly halves the wait.
    const collected = await Promise.all(
      this.providers.map(async (provider) => {
        try {
          return { provider, items: await provider.collect(request), error: null };
        } catch (err) {
          return { provider, items: [], error: err as Error };
        }
      }),
    );
    for (const result of collected) {
      const { provider, error } = result;
      if (error) {
        // A failing source costs its section, never the reply.
        const message = error.message;
        failures.push({ section: provider.section, message });
        this.logger.error({
          msg: 'context provider failed',
          section: provider.section,
          error: message,
        });
        continue;
      }
      candidates.set(provider.section, [
        ...(candidates.get(provider.section) ?? []),
        ...result.items,
      ]);
    }
    const persona = input.legacy.persona?.trim() || defaultPersona(input.legacy);
    let context = this.fit(persona, input.legacy.name, candidates, budget, recent);
    // The A/B holdout: the memory block is left out, and what it would have held is kept aside
    // so that the reply is measured against the same memories in both arms.
    const holdout = inMemoryHoldout(input.conversation.id, this.config.env.MEMORY_AB_HOLDOUT);
    if (holdout) {
      const withheld = context.sections.find((s) => s.name === 'memories')?.items ?? [];
      const withoutMemories = new Map(candidates);
      withoutMemories.delete('memories');
      context = this.fit(persona, input.legacy.name, withoutMemories, budget, recent);
      context.withheldMemories = withheld;
      for (const item of withheld) {
        context.dropped.push({ item, section: 'memories', reason: 'memory A/B holdout' });
      }
    }
    context.memoryHoldout = holdout;
    context.failures = failures;
    context.totalMs = performance.now() - started;
    for (const observer of this.observers) {
      try {
        await observer.assembled(request, context);
      } catch (err) {
        this.logger.warn({ msg: 'assembly observer failed', error: (err as Error).message });
      }
    }
    return context;
  }

  /** Fills the sections in order within the budget and each provider's caps. */
  fit(
    persona: string,
    legacyName: string,
    candidates: Map<ContextSectionName, ContextItem[]>,
    budget: number,
    recent: MessageEntity[],
  ): AssembledContext {
    let remaining = budget;
    let truncated = false;
    const sections: AssembledSection[] = [];
    const dropped: AssembledContext['dropped'] = [];
    for (const name of SECTION_ORDER) {
      const caps = this.providers.filter((p) => p.section === name);
      const maxItems = Math.min(...caps.map((p) => p.maxItems ?? Infinity));
      const maxTokens = Math.min(...caps.map((p) => p.maxTokens ?? Infinity));
      const seen = new Set<string>();
      const items: ContextItem[] = [];
      let tokens = 0;
      const header = countTokens(`## ${SECTION_TITLES[name](legacyName)}\n`);
      for (const item of [...(candidates.get(name) ?? [])].sort(byScore)) {
        const key = `${item.sourceType}:${item.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const cost = item.tokens + 1 + (items.length === 0 ? header : 0);
        if (items.length >= maxItems) {
          dropped.push({ item, section: name, reason: `section holds at most ${maxItems} items` });
          continue;
        }
        if (tokens + cost > maxTokens) {
          dropped.push({
            item,
            section: name,
            reason: `section holds at most ${maxTokens} tokens`,
          });
          continue;
        }
        if (cost > remaining) {
          truncated = true;
          dropped.push({ item, section: name, reason: 'over the token budget' });
          continue;
        }
        items.push(item);
        tokens += cost;
        remaining -= cost;
      }
      if (items.length > 0) sections.push({ name, items, tokens });
    }
    const system = [
      persona,
      ...sections.map(
        (s) => `## ${SECTION_TITLES[s.name](legacyName)}\n${s.items.map((i) => i.text).join('\n')}`,
      ),
    ].join('\n\n');
    return {
      persona,
      system,
      sections,
      recent,
      items: sections.flatMap((s) => s.items),
      tokenCount: budget - remaining,
      budget,
      truncated,
      dropped,
    };
  }

  /** Lets each provider record, in the assistant turn's transaction, what the model was given. */
  async markUsed(
    context: AssembledContext,
    assistantMessage: MessageEntity,
    manager: EntityManager,
  ): Promise<void> {
    for (const provider of this.providers) {
      const mine = context.items.filter((i) =>
        context.sections.some((s) => s.name === provider.section && s.items.includes(i)),
      );
      if (mine.length > 0 && provider.markUsed) {
        await provider.markUsed(mine, assistantMessage, manager);
      }
    }
  }
}
