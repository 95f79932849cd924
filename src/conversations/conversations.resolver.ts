import { UseGuards } from '@nestjs/common';
import {
  Args,
  Context,
  ID,
  Mutation,
  Parent,
  Query,
  ResolveField,
  Resolver,
  Subscription,
} from '@nestjs/graphql';
import { ForwardPageArgs, PageArgs } from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import type { RequestContext } from '../graphql/request-context.js';
import { boundToSession, unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { ConversationEntity } from './conversation.entity.js';
import { ConversationsService } from './conversations.service.js';
import { ImportConversationInput, StartConversationInput } from './dto/conversation.inputs.js';
import {
  ConversationConnection,
  ConversationModel,
  ImportConversationPayload,
  LeftBehindConversationConnection,
  LeftBehindConversationModel,
  MessageConnection,
  MessageModel,
} from './models/conversation.model.js';

function toModel(c: ConversationEntity): ConversationModel {
  return { ...c, messageCount: c.nextTurnIndex };
}

function toLeftBehind(c: ConversationEntity): LeftBehindConversationModel {
  return {
    id: c.id,
    legacyId: c.legacyId,
    title: c.title,
    messageCount: c.nextTurnIndex,
    lastActivityAt: c.lastActivityAt,
    createdAt: c.createdAt,
  };
}

@Resolver(() => ConversationModel)
@UseGuards(GqlAuthGuard)
export class ConversationsResolver {
  constructor(
    private readonly service: ConversationsService,
    private readonly bus: EventBus,
  ) {}

  @Query(() => ConversationModel, { description: 'One of your conversations.' })
  async conversation(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toModel(await this.service.getOwned(user, id));
  }

  @Query(() => ConversationConnection, {
    description: 'Your conversations about a legacy, most recently active first.',
  })
  async conversations(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Args() page: ForwardPageArgs,
  ) {
    const connection = await this.service.list(user, legacyId, page);
    return {
      ...connection,
      nodes: connection.nodes.map(toModel),
      edges: connection.edges.map((e) => ({ cursor: e.cursor, node: toModel(e.node) })),
    };
  }

  @Query(() => LeftBehindConversationConnection, {
    description:
      'Your conversations in legacies you left or were removed from, most recently active first: you can still delete them.',
  })
  async leftBehindConversations(@CurrentUser() user: UserEntity, @Args() page: ForwardPageArgs) {
    const connection = await this.service.listLeftBehind(user, page);
    return {
      ...connection,
      nodes: connection.nodes.map(toLeftBehind),
      edges: connection.edges.map((e) => ({ cursor: e.cursor, node: toLeftBehind(e.node) })),
    };
  }

  @Mutation(() => ConversationModel)
  async startConversation(
    @CurrentUser() user: UserEntity,
    @Args('input') input: StartConversationInput,
  ) {
    return toModel(await this.service.start(user, input));
  }

  @Mutation(() => ImportConversationPayload, {
    description: 'A new conversation with up to IMPORT_MAX_MESSAGES turns, all or nothing.',
  })
  async importConversation(
    @CurrentUser() user: UserEntity,
    @Args('input') input: ImportConversationInput,
  ) {
    const { conversation, count } = await this.service.import(user, input);
    return { conversation: toModel(conversation), importedCount: count };
  }

  @Mutation(() => ConversationModel, {
    description: 'Switch memory creation from this conversation on or off.',
  })
  async setConversationRemember(
    @CurrentUser() user: UserEntity,
    @Args('conversationId', { type: () => ID }, UuidPipe) conversationId: string,
    @Args('on') on: boolean,
  ) {
    return toModel(await this.service.setRemember(user, conversationId, on));
  }

  @Mutation(() => Boolean, {
    description:
      'Deletes your conversation and all derived from it, also after you left its legacy.',
  })
  async deleteConversation(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    await this.service.delete(user, id);
    return true;
  }

  @Subscription(() => MessageModel, {
    description: 'Every turn stored in one of your conversations.',
    resolve: unlessEnded((payload: MessageModel) => payload),
  })
  async messageAdded(
    @CurrentUser() user: UserEntity,
    @Args('conversationId', { type: () => ID }, UuidPipe) conversationId: string,
    @Context() context: RequestContext,
  ) {
    const conversation = await this.service.getOwned(user, conversationId);
    const events = this.bus.subscribe(topics.conversationMessages(conversationId));
    return boundToSession(
      this.bus,
      context,
      events,
      this.service.subscriptionBounds(user, conversation),
    );
  }

  @ResolveField(() => MessageConnection)
  messages(@Parent() conversation: ConversationModel, @Args() page: PageArgs) {
    return this.service.messagesPage(conversation as unknown as ConversationEntity, page);
  }
}
