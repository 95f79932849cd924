import { UseGuards } from '@nestjs/common';
import { Args, ID, Int, Mutation, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { ConversationModel } from '../conversations/models/conversation.model.js';
import { Loaders, RequestLoaders } from '../graphql/loaders.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { ConversationChunkModel, SummarizeNowPayload } from './models/conversation-chunk.model.js';
import { SummariesService } from './summaries.service.js';
import { CONVERSATION_CHUNKS, UNSUMMARIZED_TURNS } from './summary.loaders.js';

@Resolver()
@UseGuards(GqlAuthGuard)
export class SummariesResolver {
  constructor(private readonly summaries: SummariesService) {}

  @Mutation(() => SummarizeNowPayload, {
    description:
      'Summarizes the unsummarized turns of your conversation now, below SUMMARIZATION_THRESHOLD too.',
  })
  async summarizeNow(
    @CurrentUser() user: UserEntity,
    @Args('conversationId', { type: () => ID }, UuidPipe) conversationId: string,
  ) {
    const result = await this.summaries.summarizeNow(user, conversationId);
    return {
      ...result,
      conversation: { ...result.conversation, messageCount: result.conversation.nextTurnIndex },
    };
  }
}

/** Summary fields of a conversation (already authorized by whatever returned it). */
@Resolver(() => ConversationModel)
export class ConversationSummariesResolver {
  constructor(private readonly summaries: SummariesService) {}

  @ResolveField(() => [ConversationChunkModel], {
    description: 'Its summaries, in turn order, with the range of turns each covers.',
  })
  chunks(@Parent() conversation: ConversationModel, @RequestLoaders() loaders: Loaders) {
    return loaders.get(CONVERSATION_CHUNKS, this.summaries).load(conversation.id);
  }

  @ResolveField(() => Int, { description: 'Turns no summary covers yet.' })
  unsummarizedTurns(@Parent() conversation: ConversationModel, @RequestLoaders() loaders: Loaders) {
    return loaders.get(UNSUMMARIZED_TURNS, this.summaries).load(conversation.id);
  }
}
