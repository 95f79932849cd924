import { UseGuards } from '@nestjs/common';
import { Args, ID, Int, Mutation, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { toConversationModel } from '../conversations/conversation.mapper.js';
import { ConversationModel } from '../conversations/models/conversation.model.js';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
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
      chunks: result.chunks,
      conversation: toConversationModel(result.conversation),
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
  async chunks(
    @Parent() conversation: ConversationModel,
    @CurrentUser() user: UserEntity,
    @RequestLoaders() loaders: Loaders,
  ) {
    const chunks = await loaders
      .get(CONVERSATION_CHUNKS, { summaries: this.summaries, viewerId: user.id })
      .load(conversation.id);
    // One who left reads the summaries of what was said while they took part, nothing after.
    const until = conversation.readableUntilTurn;
    return until === null ? chunks : chunks.filter((c) => c.rangeEnd < until);
  }

  @ResolveField(() => Int, {
    description: 'Turns no summary covers yet (0 for a conversation you left).',
  })
  async unsummarizedTurns(
    @Parent() conversation: ConversationModel,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (conversation.readableUntilTurn !== null) return 0;
    return loaders.get(UNSUMMARIZED_TURNS, this.summaries).load(conversation.id);
  }
}
