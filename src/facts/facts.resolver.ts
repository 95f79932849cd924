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
import { ForwardPageArgs } from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
import type { RequestContext } from '../graphql/request-context.js';
import { filterMap, unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserModel } from '../identity/models/user.model.js';
import { UserEntity } from '../identity/user.entity.js';
import { UsersService } from '../identity/users.service.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { AddFactInput, FactFilter, UpdateFactInput } from './dto/fact.inputs.js';
import { FactVisibility } from './fact.enums.js';
import { FactEvent, FactEventsService } from './fact-events.service.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { FactSharingService } from './fact-sharing.service.js';
import { FactWriterService } from './fact-writer.service.js';
import { FactsService } from './facts.service.js';
import {
  FactChangedEventModel,
  FactConnection,
  FactHistoryEntryModel,
  FactModel,
  FactSourceModel,
} from './models/fact.model.js';
import { USER_BY_ID } from '../identity/user.loaders.js';
import { FACT_SOURCES, FAMILY_VISIBLE_FACT, VISIBLE_FACT } from './fact.loaders.js';
import { toFactConnection, toFactModel } from './fact.mapper.js';
import { FAMILY_VIEWER, listViewer, seesSources } from './fact-visibility.js';

@Resolver(() => FactModel)
@UseGuards(GqlAuthGuard)
export class FactsResolver {
  constructor(
    private readonly service: FactsService,
    private readonly writer: FactWriterService,
    private readonly sharing: FactSharingService,
    private readonly legacies: LegaciesService,
    private readonly events: FactEventsService,
    private readonly users: UsersService,
    private readonly bus: EventBus,
  ) {}

  @Query(() => FactConnection, {
    description:
      "The legacy's facts you may see: your own (any visibility) and those other members shared. Newest first, or best first with a search.",
  })
  async facts(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Args('filter', { type: () => FactFilter, nullable: true }) filter: FactFilter | null,
    @Args() page: ForwardPageArgs,
  ) {
    const connection = await this.service.list(user, legacyId, filter, page);
    return toFactConnection(connection, listViewer(user.id, filter?.asFamily));
  }

  @Query(() => FactConnection, {
    description:
      'Your own facts in legacies you are no longer a member of (you left or were removed): yours to delete with deleteFact. Newest first.',
  })
  async leftBehindFacts(@CurrentUser() user: UserEntity, @Args() page: ForwardPageArgs) {
    const connection = await this.service.listLeftBehind(user, page);
    return toFactConnection(connection, user.id);
  }

  @Query(() => FactModel, {
    description:
      'One fact, as you see it: yours, or one another member shared (NOT_FOUND otherwise). A supersession by a fact you cannot see is not shown.',
  })
  async fact(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ): Promise<FactModel> {
    return toFactModel(await this.service.getVisible(user, id), user.id);
  }

  @Query(() => [FactHistoryEntryModel], {
    description:
      "A fact's changes, oldest first. Other members see the changes made while it was shared.",
  })
  factHistory(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return this.service.history(user, id);
  }

  @Mutation(() => FactModel, {
    description:
      'Write a fact by hand (private unless visibility is SHARED). Restating one of your facts raises its mention count instead.',
  })
  async addFact(@CurrentUser() user: UserEntity, @Args('input') input: AddFactInput) {
    return toFactModel(await this.writer.add(user, input), user.id);
  }

  @Mutation(() => FactModel, { description: 'Its author changes its content or category.' })
  async updateFact(@CurrentUser() user: UserEntity, @Args('input') input: UpdateFactInput) {
    return toFactModel(await this.service.update(user, input), user.id);
  }

  @Mutation(() => FactModel, {
    description:
      'Its author shares or unshares it; an owner or admin can take a shared fact back to private.',
  })
  async setFactVisibility(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
    @Args('visibility', { type: () => FactVisibility }) visibility: FactVisibility,
  ) {
    return toFactModel(await this.sharing.setVisibility(user, id, visibility), user.id);
  }

  @Mutation(() => FactModel, {
    description: 'A soft delete, by its author or an owner or admin; restoreFact undoes it.',
  })
  async deleteFact(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toFactModel(await this.service.delete(user, id), user.id);
  }

  @Mutation(() => FactModel, {
    description: 'Undoes deleteFact: its author, or the owner or admin who deleted it.',
  })
  async restoreFact(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toFactModel(await this.service.restore(user, id), user.id);
  }

  @Subscription(() => FactChangedEventModel, {
    description:
      "Changes to the legacy's facts you may see. A fact that stops being visible to you (unshared, deleted) arrives as REMOVED.",
    resolve: unlessEnded((view: FactChangedEventModel) => view),
  })
  async factChanged(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Context() context: RequestContext,
  ) {
    return this.legacies.memberSubscription(user.id, legacyId, context, () =>
      this.factViews(user, legacyId),
    );
  }

  private factViews(user: UserEntity, legacyId: string) {
    // Filtered here rather than with the decorator's `filter`, which turns a refusal above
    // into a broken stream instead of an error result.
    return filterMap(this.bus.subscribe<FactEvent>(topics.legacyFacts(legacyId)), async (event) => {
      if (!(await this.events.deliverable(event, user))) return null;
      const view = this.events.viewOf(event, user.id)!;
      return { ...view, fact: view.fact && toFactModel(view.fact, user.id) };
    });
  }

  @ResolveField(() => UserModel, { nullable: true })
  author(@Parent() fact: FactModel, @RequestLoaders() loaders: Loaders) {
    return loaders.get(USER_BY_ID, this.users).load(fact.authorId);
  }

  @ResolveField(() => FactModel, {
    nullable: true,
    description: 'The newer fact that superseded it, when you may see that one.',
  })
  async supersededBy(
    @CurrentUser() user: UserEntity,
    @Parent() fact: FactModel,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (!fact.supersededBy) return null;
    const family = fact.viewerId === FAMILY_VIEWER;
    const newer = await (
      family
        ? loaders.get(FAMILY_VISIBLE_FACT, this.service)
        : loaders.get(VISIBLE_FACT, { facts: this.service, viewerId: user.id })
    ).load(fact.supersededBy);
    return newer && toFactModel(newer, family ? FAMILY_VIEWER : user.id);
  }

  @ResolveField(() => [FactSourceModel], {
    description: 'Every mention of it, oldest first (its author only; empty for others).',
  })
  async sources(
    @CurrentUser() user: UserEntity,
    @Parent() fact: FactModel,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (!seesSources(fact, fact.viewerId ?? user.id)) return [];
    return loaders.get(FACT_SOURCES, this.service).load(fact.id);
  }
}

@Resolver(() => FactHistoryEntryModel)
@UseGuards(GqlAuthGuard)
export class FactHistoryResolver {
  constructor(private readonly service: FactsService) {}

  @ResolveField(() => FactModel, {
    nullable: true,
    description: 'The fact that superseded this one or that it superseded, when you may see it.',
  })
  async relatedFact(
    @CurrentUser() user: UserEntity,
    @Parent() entry: FactHistoryEntryModel,
    @RequestLoaders() loaders: Loaders,
  ) {
    if (!entry.relatedFactId) return null;
    const related = await loaders
      .get(VISIBLE_FACT, { facts: this.service, viewerId: user.id })
      .load(entry.relatedFactId);
    return related && toFactModel(related, user.id);
  }
}
