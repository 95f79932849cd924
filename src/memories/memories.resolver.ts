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
import { ForwardPageArgs } from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { MessageModel } from '../conversations/models/conversation.model.js';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
import { AppConfig } from '../config/app-config.js';
import type { RequestContext } from '../graphql/request-context.js';
import { boundToSession, unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { ForgetMemoriesFilter, MemoryFilterInput, RememberThisInput } from './dto/memory.inputs.js';
import { MemoriesService } from './memories.service.js';
import { MemoryEntity } from './memory.entity.js';
import { MemoryException } from './memory.exception.js';
import { MemoryExportFormat } from './memory.enums.js';
import { MemoryChangedEvent, reviveChange, toMemoryModel } from './memory.mapper.js';
import {
  ForgetMemoriesPayload,
  ImportMemoriesPayload,
  MemoryChangedModel,
  MemoryConnection,
  MemoryExportModel,
  MemoryModel,
  MemoryStatsModel,
  RememberThisPayload,
} from './models/memory.model.js';
import { MEMORY_SOURCE_MESSAGE, MESSAGE_USED_MEMORIES, OWN_MEMORY } from './memory.loaders.js';

@Resolver(() => MemoryModel)
@UseGuards(GqlAuthGuard)
export class MemoriesResolver {
  constructor(
    private readonly service: MemoriesService,
    private readonly bus: EventBus,
    private readonly config: AppConfig,
  ) {}

  private model(memory: MemoryEntity): MemoryModel {
    return toMemoryModel(memory, this.config.env.MEMORY_UNDO_DAYS);
  }

  @Query(() => MemoryConnection, {
    description:
      'Your memories, newest first (best match first with `search`). Active and archived unless filtered by status.',
  })
  async memories(
    @CurrentUser() user: UserEntity,
    @Args('filter', { type: () => MemoryFilterInput, nullable: true }) filter: MemoryFilterInput,
    @Args() page: ForwardPageArgs,
  ) {
    const connection = await this.service.list(user, filter, page);
    return {
      ...connection,
      nodes: connection.nodes.map((m) => this.model(m)),
      edges: connection.edges.map((e) => ({ cursor: e.cursor, node: this.model(e.node) })),
    };
  }

  @Query(() => MemoryModel, { description: 'One of your memories, whatever its status.' })
  async memory(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return this.model(await this.service.get(user, id));
  }

  @Query(() => MemoryExportModel, {
    description: 'Everything Keepsake remembers about you (active and archived), every field.',
  })
  exportMemories(
    @CurrentUser() user: UserEntity,
    @Args('format', { type: () => MemoryExportFormat }) format: MemoryExportFormat,
  ) {
    return this.service.export(user, format);
  }

  @Query(() => MemoryStatsModel, { description: 'How your memory is doing.' })
  memoryStats(@CurrentUser() user: UserEntity) {
    return this.service.stats(user);
  }

  @Mutation(() => RememberThisPayload, {
    description: 'Asks Keepsake to remember something, even while memory is paused.',
  })
  async rememberThis(@CurrentUser() user: UserEntity, @Args('input') input: RememberThisInput) {
    const result = await this.service.rememberThis(user, input);
    return {
      memory: this.model(result.memory),
      outcome: result.outcome,
      supersededIds: result.superseded,
    };
  }

  @Mutation(() => MemoryModel, {
    description: 'Forgets a memory: restorable with restoreMemory until restorableUntil.',
  })
  async forgetMemory(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return this.model(await this.service.forget(user, id));
  }

  @Mutation(() => MemoryModel, {
    description: 'Undoes forgetMemory (within the undo window) or brings an archived memory back.',
  })
  async restoreMemory(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return this.model(await this.service.restore(user, id));
  }

  @Mutation(() => ForgetMemoriesPayload, {
    description: 'Forgets every memory taken from a conversation or from one turn.',
  })
  async forgetMemories(
    @CurrentUser() user: UserEntity,
    @Args('filter') filter: ForgetMemoriesFilter,
  ) {
    const { ids, restorableUntil } = await this.service.forgetMany(user, filter);
    return { forgottenCount: ids.length, memoryIds: ids, restorableUntil };
  }

  @Mutation(() => Int, {
    description:
      'Deletes all your memories and their vectors now, with no undo. Returns how many. confirm must be "DELETE ALL MY MEMORIES".',
  })
  clearAllMemories(@CurrentUser() user: UserEntity, @Args('confirm') confirm: string) {
    return this.service.clearAll(user, confirm);
  }

  @Mutation(() => ImportMemoriesPayload, {
    description: 'Takes back a JSON export (yours or from another system); duplicates are merged.',
  })
  importMemories(@CurrentUser() user: UserEntity, @Args('json') json: string) {
    return this.service.import(user, json);
  }

  @Subscription(() => MemoryChangedModel, {
    description: 'Changes to your memories: saved, updated, forgotten, restored, archived.',
    resolve: unlessEnded((payload: MemoryChangedEvent) => reviveChange(payload)),
  })
  memoryChanged(@CurrentUser() user: UserEntity, @Context() context: RequestContext) {
    // The topic is the user's own: nobody else's events are published on it, and their
    // memories stay theirs whatever legacies they leave. It ends when the token expires.
    const events = this.bus.subscribe<MemoryChangedEvent>(topics.userMemories(user.id));
    return boundToSession(this.bus, context, events, {
      check: async (event) => {
        if (event && event.userId !== user.id) throw MemoryException.notFound();
      },
    });
  }

  @ResolveField(() => MemoryModel, {
    nullable: true,
    description: 'The newer memory that replaced it (archived as SUPERSEDED), while it exists.',
  })
  async supersededBy(
    @Parent() memory: MemoryModel,
    @CurrentUser() user: UserEntity,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (!memory.supersededBy) return null;
    const newer = await loaders
      .get(OWN_MEMORY, { memories: this.service, user })
      .load(memory.supersededBy);
    return newer && toMemoryModel(newer, this.config.env.MEMORY_UNDO_DAYS);
  }

  @ResolveField(() => MessageModel, {
    nullable: true,
    description: 'Your turn it was taken from; null for manual and imported memories.',
  })
  sourceMessage(
    @Parent() memory: MemoryModel,
    @CurrentUser() user: UserEntity,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (!memory.sourceMessageId) return null;
    return loaders
      .get(MEMORY_SOURCE_MESSAGE, { memories: this.service, user })
      .load(memory.sourceMessageId);
  }
}

/** Message.usedMemories: which of your memories the agent was given for a reply. */
@Resolver(() => MessageModel)
@UseGuards(GqlAuthGuard)
export class MessageMemoriesResolver {
  constructor(
    private readonly service: MemoriesService,
    private readonly config: AppConfig,
  ) {}

  @ResolveField(() => [MemoryModel], {
    description:
      'The memories given to the agent for this reply (forgotten ones are left out); empty for other turns.',
  })
  async usedMemories(
    @Parent() message: MessageModel,
    @CurrentUser() user: UserEntity,
    @RequestLoaders() loaders: Loaders,
  ) {
    const rows = await loaders
      .get(MESSAGE_USED_MEMORIES, { memories: this.service, user })
      .load(message.id);
    return rows.map((m) => toMemoryModel(m, this.config.env.MEMORY_UNDO_DAYS));
  }
}
