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
import { Connection, ForwardPageArgs } from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import type { RequestContext } from '../graphql/request-context.js';
import { filterMap, unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { AddStoryInput, StoriesArgs, StoryFilter, UpdateStoryInput } from './dto/story.inputs.js';
import {
  ExtractStoryPayload,
  LeftBehindStoryConnection,
  StoryChangedEventModel,
  StoryConnection,
  StoryModel,
  StoryPageModel,
} from './models/story.model.js';
import { StoriesService } from './stories.service.js';
import { StoryEvent, StoryEventsService } from './story-events.service.js';
import { StoryVisibility } from './story.enums.js';
import { StoryEntity } from './story.entity.js';
import { toLeftBehindStoryModel, toStoryModel } from './story.mapper.js';

@Resolver(() => StoryModel)
@UseGuards(GqlAuthGuard)
export class StoriesResolver {
  constructor(
    private readonly service: StoriesService,
    private readonly events: StoryEventsService,
    private readonly legacies: LegaciesService,
    private readonly bus: EventBus,
  ) {}

  @Query(() => StoryConnection, {
    description:
      'The legacy’s stories and documents you may see: yours and those shared, newest first.',
  })
  async stories(
    @CurrentUser() user: UserEntity,
    @Args() args: StoriesArgs,
    @Args('filter', { type: () => StoryFilter, nullable: true }) filter: StoryFilter | null,
  ) {
    return toStoryConnection(await this.service.list(user, args.legacyId, filter ?? {}, args));
  }

  @Query(() => LeftBehindStoryConnection, {
    description:
      'Your own stories in legacies you are no longer a member of (you left or were removed): yours to delete with deleteStory. Newest first.',
  })
  async leftBehindStories(@CurrentUser() user: UserEntity, @Args() page: ForwardPageArgs) {
    return toStoryConnection(await this.service.listLeftBehind(user, page), toLeftBehindStoryModel);
  }

  @Query(() => StoryModel, { description: 'A story or document you may see.' })
  async story(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toStoryModel(await this.service.get(user, id));
  }

  @ResolveField(() => [StoryPageModel], {
    description: 'Its text, page by page (one page for text, Markdown and DOCX).',
  })
  async pages(
    @Parent() story: StoryModel,
    @CurrentUser() user: UserEntity,
    @Args('from', { type: () => Int, nullable: true, description: 'First page (1 by default).' })
    from: number | null,
    @Args('count', { type: () => Int, nullable: true, description: 'Pages (10 by default).' })
    count: number | null,
  ) {
    const start = Math.max(1, from ?? 1);
    const take = Math.min(100, Math.max(0, count ?? 10));
    return this.service.pages(user, story.id, start, take);
  }

  @Mutation(() => StoryModel, {
    description:
      'Adds a story written in the app (text or Markdown). Upload files with POST /legacies/:id/documents.',
  })
  async addStory(@CurrentUser() user: UserEntity, @Args('input') input: AddStoryInput) {
    return toStoryModel(await this.service.add(user, input));
  }

  @Mutation(() => StoryModel, { description: 'Its author edits a story: title, date, or text.' })
  async updateStory(@CurrentUser() user: UserEntity, @Args('input') input: UpdateStoryInput) {
    return toStoryModel(await this.service.update(user, input));
  }

  @Mutation(() => StoryModel, {
    description:
      'Its author shares or unshares a story; an owner or admin can take a shared one back to private.',
  })
  async setStoryVisibility(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
    @Args('visibility', { type: () => StoryVisibility }) visibility: StoryVisibility,
  ) {
    return toStoryModel(await this.service.setVisibility(user, id, visibility));
  }

  @Mutation(() => ID, {
    description:
      'Deletes a story with its file, passages and vectors, now: its author, or an owner or admin for a shared one. Returns its id.',
  })
  deleteStory(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return this.service.delete(user, id);
  }

  @Mutation(() => ExtractStoryPayload, {
    description:
      'Its author reads facts about the legacy from a READY story now, as from a conversation (each mention points at its page). New facts are PRIVATE unless shareLikeStory (then they take the story’s visibility). Passages already read are not read again.',
  })
  async extractStory(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
    @Args('shareLikeStory', { type: () => Boolean, nullable: true }) shareLikeStory: boolean | null,
  ) {
    const result = await this.service.extract(user, id, shareLikeStory === true);
    return { ...result, story: toStoryModel(result.story) };
  }

  @Subscription(() => StoryChangedEventModel, {
    description:
      'Changes to the legacy’s stories you may see. One that stops being visible to you (unshared, deleted) arrives as REMOVED.',
    resolve: unlessEnded((view: StoryChangedEventModel) => view),
  })
  async storyChanged(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Context() context: RequestContext,
  ) {
    return this.legacies.memberSubscription(user.id, legacyId, context, () =>
      filterMap(this.bus.subscribe<StoryEvent>(topics.legacyStories(legacyId)), async (event) => {
        const view = await this.events.viewOf(event, user);
        return view && { ...view, story: view.story && toStoryModel(view.story) };
      }),
    );
  }
}

function toStoryConnection<M>(
  page: Connection<StoryEntity>,
  toModel: (story: StoryEntity) => M = toStoryModel as (story: StoryEntity) => M,
) {
  return {
    ...page,
    nodes: page.nodes.map(toModel),
    edges: page.edges.map((e) => ({ cursor: e.cursor, node: toModel(e.node) })),
  };
}
