import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
} from '../context/context.types.js';
import { SearchContextService } from './search-context.service.js';

/** Relevant past turns: at most SEARCH_CONTEXT_TURNS (6), code chunks first for code questions. */
@Injectable()
export class TurnsContextProvider implements ContextSectionProvider {
  readonly section = 'turns' as const;

  constructor(
    private readonly context: SearchContextService,
    private readonly config: AppConfig,
  ) {}

  get maxItems(): number {
    return this.config.env.SEARCH_CONTEXT_TURNS;
  }

  async collect(request: ContextRequest): Promise<ContextItem[]> {
    if (this.maxItems === 0) return [];
    const outcome = await this.context.outcomeFor(request);
    // A few more than fit, so that the budget can drop a long one and keep the next.
    const picked = outcome.ranked.filter((r) => r.kind === 'segment').slice(0, this.maxItems * 2);
    return this.context.toItems(request.user.id, request.user.timezone, picked, {
      currentConversationId: request.conversation.id,
    });
  }
}
