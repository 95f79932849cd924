import { UseGuards } from '@nestjs/common';
import {
  Args,
  Context,
  ID,
  Mutation,
  Parent,
  ResolveField,
  Resolver,
  Subscription,
} from '@nestjs/graphql';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { deltaFor, seesGeneration } from '../conversations/withheld-reply.js';
import { MessageModel } from '../conversations/models/conversation.model.js';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
import type { RequestContext } from '../graphql/request-context.js';
import { boundToSession, filterMap, unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { AssistantReplyEntity } from './assistant-reply.entity.js';
import type { ReplyDelta } from './agent-reply.service.js';
import { AgentService } from './agent.service.js';
import { AssistantReplyRepository } from './assistant-reply.repository.js';
import { RecordAssistantMessageInput } from './dto/record-assistant-message.input.js';
import { SendMessageInput } from './dto/send-message.input.js';
import { MessageGenerationModel, ReplyDeltaModel } from './models/reply.model.js';
import { SendMessagePayload } from './models/send-message.model.js';
import { MESSAGE_GENERATION } from './agent.loaders.js';
import { ReplyListeners, releasing } from './reply-listeners.js';
import { recallId } from '../search/recall-id.js';

@Resolver(() => MessageModel)
@UseGuards(GqlAuthGuard)
export class MessageGenerationResolver {
  constructor(private readonly replies: AssistantReplyRepository) {}

  private load(message: MessageModel, loaders: Loaders): Promise<AssistantReplyEntity | null> {
    return loaders.get(MESSAGE_GENERATION, this.replies).load(message.id);
  }

  @ResolveField(() => MessageGenerationModel, {
    nullable: true,
    description:
      'For assistant turns the agent wrote: model, usage and the context items it was given. Null for other turns.',
  })
  async generation(
    @Parent() message: MessageModel,
    @CurrentUser() user: UserEntity,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (!seesGeneration(message, user.id)) return null;
    const reply = await this.load(message, loaders);
    if (!reply) return null;
    return {
      ...reply,
      cutOff: reply.finishReason === 'length' || reply.finishReason === 'cancelled',
      // Stored as the assembly named them; read in the API's one id scheme.
      contextItems: reply.contextItems.map((i) => ({
        sourceType: i.sourceType,
        recallItemId: recallId(i.sourceType, i.id),
        sourceId: i.id,
        section: i.section,
        score: i.score,
      })),
      memoryActions: (reply.memoryActions ?? []).map((a) => ({
        ...a,
        restorableUntil: a.restorableUntil ? new Date(a.restorableUntil) : null,
      })),
    };
  }

  @ResolveField(() => Boolean, {
    description: 'True for an assistant turn stored because the model failed.',
  })
  async isError(@Parent() message: MessageModel, @RequestLoaders() loaders: Loaders) {
    return (await this.load(message, loaders))?.isError ?? false;
  }
}

@Resolver()
@UseGuards(GqlAuthGuard)
export class AgentResolver {
  constructor(
    private readonly agent: AgentService,
    private readonly conversations: ConversationsService,
    private readonly bus: EventBus,
    private readonly listeners: ReplyListeners,
  ) {}

  @Mutation(() => SendMessagePayload, {
    description: "Stores your turn and, unless AGENT_REPLY=off, the agent's streamed reply.",
  })
  sendMessage(
    @CurrentUser() user: UserEntity,
    @Args('input') input: SendMessageInput,
    @Context() context: RequestContext,
  ) {
    return this.agent.send(user, input, context.req);
  }

  @Mutation(() => MessageModel, {
    description:
      'Stores an assistant turn, for clients that run their own model, with the memories and items it used (counted as for the agent’s own replies).',
  })
  recordAssistantMessage(
    @CurrentUser() user: UserEntity,
    @Args('input') input: RecordAssistantMessageInput,
  ) {
    return this.agent.record(user, input);
  }

  @Subscription(() => ReplyDeltaModel, {
    description: "The agent's reply to your turns in one of your conversations, as it streams.",
    resolve: unlessEnded((payload: ReplyDeltaModel) => payload),
  })
  async assistantReplyDelta(
    @CurrentUser() user: UserEntity,
    @Args('conversationId', { type: () => ID }, UuidPipe) conversationId: string,
    @Context() context: RequestContext,
  ) {
    const conversation = await this.conversations.getParticipating(user, conversationId);
    // Filtered here rather than with the decorator's `filter`, which turns a refusal above
    // into a broken stream instead of an error result.
    const deltas = filterMap(
      this.bus.subscribe<ReplyDelta>(topics.conversationReplyDeltas(conversationId)),
      (delta) => Promise.resolve(deltaFor(delta, user.id)),
    );
    // A reply streams many deltas: one access check a second, and at once on a revocation.
    const bound = boundToSession(this.bus, context, deltas, {
      ...this.conversations.subscriptionBounds(user, conversation),
      trustPassedCheckMs: 1000,
    });
    // Counted while it lasts: a reply nobody listens to any more may stop (AgentReplyService).
    return releasing(bound, this.listeners.watch(conversationId));
  }
}
