import { UseGuards } from '@nestjs/common';
import { Args, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import { AuditOperation } from '../audit/audit-entry.entity.js';
import { AuditService } from '../audit/audit.service.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import {
  ContextArgs,
  MetricsReportArgs,
  RecallArgs,
  RetrievalDebugArgs,
} from './dto/search.args.js';
import {
  AssembledContextModel,
  ForgetRecallItemPayload,
  MemoryMetricsReportModel,
  RecallItemModel,
  RetrievalDebugModel,
} from './models/search.model.js';
import { SearchService } from './search.service.js';

@Resolver()
@UseGuards(GqlAuthGuard)
export class SearchResolver {
  constructor(
    private readonly search: SearchService,
    private readonly audit: AuditService,
  ) {}

  @Query(() => AssembledContextModel, {
    description:
      'The context the agent would be given for this message in one of your conversations: sections, items with scores and provenance, tokens, and whether anything was left out. For clients that call their own model.',
  })
  context(@CurrentUser() user: UserEntity, @Args() args: ContextArgs) {
    return this.search.context(user, args.conversationId, args.query, args.budget);
  }

  @Query(() => [RecallItemModel], {
    description:
      'What Keepsake remembers about something, across your memories, the facts you may see, and your conversations about the legacy, best first.',
  })
  recall(@CurrentUser() user: UserEntity, @Args() args: RecallArgs) {
    return this.search.recall(user, args.legacyId, args.query, args.first);
  }

  @Mutation(() => ForgetRecallItemPayload, {
    description:
      'Forgets a recall result by its id: your memory (restorable for a while) or a fact you wrote. Summaries and turns cannot be forgotten one by one.',
  })
  forgetRecallItem(@CurrentUser() user: UserEntity, @Args('id', { type: () => ID }) id: string) {
    return this.search.forget(user, id);
  }

  @Query(() => RetrievalDebugModel, {
    description:
      "Every candidate of the retrieval for this message with all its scores, kept or dropped and why. The conversation's owner or a platform admin.",
  })
  async retrievalDebug(@CurrentUser() user: UserEntity, @Args() args: RetrievalDebugArgs) {
    const debug = await this.search.debug(user, args.conversationId, args.query);
    await this.audit.conversationAccessed(
      user,
      AuditOperation.RETRIEVAL_DEBUG,
      args.conversationId,
    );
    return debug;
  }
}

@Resolver()
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class MemoryMetricsResolver {
  constructor(private readonly search: SearchService) {}

  @Query(() => MemoryMetricsReportModel, {
    description:
      'Retrieval over a period (platform admins): hit rate, fallback, widening and truncation shares, latency percentiles, composition by source.',
  })
  memoryMetricsReport(@Args() args: MetricsReportArgs) {
    return this.search.report(args.from, args.to);
  }
}
