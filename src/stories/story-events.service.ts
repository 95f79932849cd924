import { Injectable } from '@nestjs/common';
import type { UserEntity } from '../identity/user.entity.js';
import { EventBus, topics } from '../pubsub/event-bus.js';
import { StoryEntity } from './story.entity.js';
import { StoryChange, StoryVisibility } from './story.enums.js';
import { StoryRepository } from './story.repository.js';
import { canSeeStory } from './story-visibility.js';

/** Published on the legacy's topic; each subscriber receives what they may see of it. */
export interface StoryEvent {
  storyId: string;
  legacyId: string;
  authorId: string;
  change: StoryChange;
  /** Shared before the change and after it (a deleted story is shared with no one). */
  sharedBefore: boolean;
  sharedAfter: boolean;
}

/** storyChanged: what a change is published as, and what each subscriber receives of it. */
@Injectable()
export class StoryEventsService {
  constructor(
    private readonly repo: StoryRepository,
    private readonly bus: EventBus,
  ) {}

  /** Tells storyChanged subscribers; a failed publish never fails the change. */
  async publish(story: StoryEntity, change: StoryChange, sharedBefore: boolean) {
    const event: StoryEvent = {
      storyId: story.id,
      legacyId: story.legacyId,
      authorId: story.authorId,
      change,
      sharedBefore,
      sharedAfter: change !== StoryChange.DELETED && story.visibility === StoryVisibility.SHARED,
    };
    await this.bus.publishAfterCommit(topics.legacyStories(story.legacyId), event, 'story event');
  }

  /**
   * What a subscriber receives of an event: the change with the story as they see it now, a
   * REMOVED for a story that stopped being visible to them, or nothing.
   */
  async viewOf(
    event: StoryEvent,
    viewer: UserEntity,
  ): Promise<{ change: StoryChange; storyId: string; story: StoryEntity | null } | null> {
    const mine = event.authorId === viewer.id;
    if (event.change === StoryChange.DELETED) {
      return mine || event.sharedBefore
        ? {
            change: mine ? StoryChange.DELETED : StoryChange.REMOVED,
            storyId: event.storyId,
            story: null,
          }
        : null;
    }
    if (!mine && !event.sharedAfter) {
      return event.sharedBefore
        ? { change: StoryChange.REMOVED, storyId: event.storyId, story: null }
        : null;
    }
    const story = await this.repo.findById(event.storyId);
    if (!story || !canSeeStory(story, viewer.id)) {
      return event.sharedBefore || mine
        ? { change: StoryChange.REMOVED, storyId: event.storyId, story: null }
        : null;
    }
    return { change: event.change, storyId: story.id, story };
  }
}
