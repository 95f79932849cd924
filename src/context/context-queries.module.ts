import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ContextModule } from './context.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { SearchModule } from '../search/search.module.js';
import { ContextQueriesService } from './context-queries.service.js';
import { ContextPresenter } from './context.presenter.js';
import { ContextResolver } from './context.resolver.js';

/**
 * The `context` and `retrievalDebug` queries. Apart from ContextModule (the assembler), which
 * the modules that add sections import: these queries show the search's own candidates, so
 * they depend on the search module, which depends on the assembler.
 */
@Module({
  imports: [ConversationsModule, LegaciesModule, SearchModule, ContextModule, AuditModule],
  providers: [ContextPresenter, ContextQueriesService, ContextResolver],
})
export class ContextQueriesModule {}
