import { UseGuards } from '@nestjs/common';
import { Args, Query, Resolver } from '@nestjs/graphql';
import { AuditOperation } from '../audit/audit-entry.entity.js';
import { AuditService } from '../audit/audit.service.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { ContextQueriesService } from './context-queries.service.js';
import { ContextArgs, RetrievalDebugArgs } from './dto/context.args.js';
import { AssembledContextModel } from './models/context.model.js';
import { RetrievalDebugModel } from './models/retrieval-debug.model.js';

@Resolver()
@UseGuards(GqlAuthGuard)
export class ContextResolver {
  constructor(
    private readonly queries: ContextQueriesService,
    private readonly audit: AuditService,
  ) {}

  @Query(() => AssembledContextModel, {
    description:
      'The context the agent would be given for this message in one of your conversations: sections, items with scores and provenance, tokens, and whether anything was left out. For clients that call their own model.',
  })
  context(@CurrentUser() user: UserEntity, @Args() args: ContextArgs) {
    return this.queries.context(user, args.conversationId, args.query, args.budget);
  }

  @Query(() => RetrievalDebugModel, {
    description:
      "Every candidate of the retrieval for this message with all its scores, kept or dropped and why. The conversation's owner or a platform admin.",
  })
  async retrievalDebug(@CurrentUser() user: UserEntity, @Args() args: RetrievalDebugArgs) {
    const debug = await this.queries.debug(user, args.conversationId, args.query);
    await this.audit.conversationAccessed(
      user,
      AuditOperation.RETRIEVAL_DEBUG,
      args.conversationId,
    );
    return debug;
  }
}
