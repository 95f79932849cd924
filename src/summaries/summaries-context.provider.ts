import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
} from '../context/context.types.js';
import { SearchContextService } from '../search/search-context.service.js';

/** Relevant conversation summaries, from the current conversation and (widened) the others. */
@Injectable()
export class SummariesContextProvider implements ContextSectionProvider {
  readonly section = 'summaries' as const;

  constructor(
    private readonly context: SearchContextService,
    private readonly config: AppConfig,
  ) {}

  get maxItems(): number {
    return this.config.env.SEARCH_CONTEXT_SUMMARIES;
  }

  async collect(request: ContextRequest): Promise<ContextItem[]> {
    if (this.maxItems === 0) return [];
    const outcome = await this.context.outcomeFor(request);
    const picked = outcome.ranked.filter((r) => r.kind === 'summary').slice(0, this.maxItems * 2);
    return this.context.toItems(request.user.id, request.user.timezone, picked, {
      currentConversationId: request.conversation.id,
    });
  }
}
