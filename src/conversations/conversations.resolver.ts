import { UseGuards } from '@nestjs/common';
import {
  Args,
  Context,
  ID,
  Int,
  Mutation,
  Parent,
  Query,
  ResolveField,
  Resolver,
  Subscription,
} from '@nestjs/graphql';
import { ForwardPageArgs, PageArgs } from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
import type { RequestContext } from '../graphql/request-context.js';
import { boundToSession, filterMap, unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { ConversationEntity } from './conversation.entity.js';
import type { MessageEntity } from './message.entity.js';
import { asReadBy } from './withheld-reply.js';
import type { ConversationModelWithViewer } from './conversation.mapper.js';
import { participantsAsSeen, toConversationModel } from './conversation.mapper.js';
import { CONVERSATION_PARTICIPANTS } from './conversation.loaders.js';
import { ConversationImportService } from './conversation-import.service.js';
import { ConversationsService } from './conversations.service.js';
import { TurnReplayService } from './turn-replay.service.js';
import {
  AddConversationParticipantInput,
  ImportConversationInput,
  StartConversationInput,
} from './dto/conversation.inputs.js';
import {
  ConversationConnection,
  ConversationModel,
  ConversationParticipantModel,
  ImportConversationPayload,
  LeftBehindConversationConnection,
  LeftBehindConversationModel,
  MessageConnection,
  MessageModel,
} from './models/conversation.model.js';

const toModel = toConversationModel;

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
    private readonly imports: ConversationImportService,
    private readonly bus: EventBus,
    private readonly replay: TurnReplayService,
  ) {}

  @Query(() => ConversationModel, {
    description: 'A conversation you take part in, or took part in (up to when you left).',
  })
  async conversation(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toModel(await this.service.getReadable(user, id));
  }

  @Query(() => ConversationConnection, {
    description:
      'The conversations about a legacy you take or took part in, most recently active first.',
  })
  async conversations(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Args() page: ForwardPageArgs,
    @RequestLoaders() loaders: Loaders,
  ) {
    // The page's participants, read through the loader the participants field asks next.
    const participants = loaders.get(CONVERSATION_PARTICIPANTS, this.service);
    const connection = await this.service.list(user, legacyId, page, (ids) =>
      participants.loadMany(ids),
    );
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

  @Mutation(() => ConversationModel, {
    description:
      'Brings another member of the legacy into a conversation you take part in (a together conversation). They see it whole, but for the replies made for one participant alone before (withheld); their memory switch starts off.',
  })
  async addConversationParticipant(
    @CurrentUser() user: UserEntity,
    @Args('input') input: AddConversationParticipantInput,
  ) {
    return toModel(await this.service.addParticipant(user, input.conversationId, input.userId));
  }

  @Mutation(() => ConversationModel, {
    description:
      'Stops taking part in a together conversation: you keep reading what was said while you were in it, nothing after. Its starter deletes it instead.',
  })
  async leaveConversation(
    @CurrentUser() user: UserEntity,
    @Args('conversationId', { type: () => ID }, UuidPipe) conversationId: string,
  ) {
    return toModel(await this.service.leave(user, conversationId));
  }

  @Mutation(() => ImportConversationPayload, {
    description: 'A new conversation with up to IMPORT_MAX_MESSAGES turns, all or nothing.',
  })
  async importConversation(
    @CurrentUser() user: UserEntity,
    @Args('input') input: ImportConversationInput,
  ) {
    const { conversation, count } = await this.imports.import(user, input);
    return {
      conversation: toModel(await this.service.getReadable(user, conversation.id)),
      importedCount: count,
    };
  }

  @Mutation(() => ConversationModel, {
    description: 'Switch memory creation from your turns in this conversation on or off.',
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
      'Deletes a conversation you started, for everyone in it, and all derived from it, also after you left its legacy.',
  })
  async deleteConversation(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    await this.service.delete(user, id);
    return true;
  }

  @Subscription(() => MessageModel, {
    description:
      'Every turn stored in a conversation you take part in. With afterTurnIndex (the last turn index you hold; -1 for none), first every turn after it, from the log, then the live ones: each once, in order, none missed, also across a reconnect.',
    resolve: unlessEnded((payload: MessageModel) => payload),
  })
  async messageAdded(
    @CurrentUser() user: UserEntity,
    @Args('conversationId', { type: () => ID }, UuidPipe) conversationId: string,
    @Args('afterTurnIndex', {
      type: () => Int,
      nullable: true,
      description: 'Resume after this turn index: the turns after it are sent first.',
    })
    afterTurnIndex: number | null,
    @Context() context: RequestContext,
  ) {
    if (afterTurnIndex != null) this.replay.check(afterTurnIndex);
    const conversation = await this.service.getParticipating(user, conversationId);
    const live = this.bus.subscribe<MessageEntity>(topics.conversationMessages(conversationId));
    // Replayed turns go through the same view and the same per-event access check as live ones.
    const turns =
      afterTurnIndex == null ? live : this.replay.resume(live, conversationId, afterTurnIndex);
    const events = filterMap(turns, (message) => Promise.resolve(asReadBy(message, user.id)));
    return boundToSession(
      this.bus,
      context,
      events,
      this.service.subscriptionBounds(user, conversation),
    );
  }

  @ResolveField(() => MessageConnection, {
    description: 'Its turns you may read: all of them, or those said before you left.',
  })
  messages(
    @Parent() conversation: ConversationModelWithViewer,
    @CurrentUser() user: UserEntity,
    @Args() page: PageArgs,
  ) {
    // Whatever returned the conversation authorized it for this viewer and set where their
    // reading ends: asking again would cost three queries per conversation in a list.
    return this.service.messagesPage(
      user.id,
      conversation.id,
      conversation.readableUntilTurn,
      page,
    );
  }

  @ResolveField(() => [ConversationParticipantModel], {
    description:
      'Who takes part (the starter first), and who left; for one who left, as it stood then.',
  })
  async participants(
    @Parent() conversation: ConversationModelWithViewer,
    @RequestLoaders() loaders: Loaders,
  ) {
    const rows = await loaders.get(CONVERSATION_PARTICIPANTS, this.service).load(conversation.id);
    return participantsAsSeen(rows, conversation.viewerLeftAt);
  }
}
