import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
} from '../context/context.types.js';
import type { UserEntity } from '../identity/user.entity.js';
import { SearchContextService } from '../search/search-context.service.js';
import type { ForgetOutcome, RecallSource } from '../search/search.service.js';
import type { Ranked } from '../search/search.types.js';
import { StoriesService } from './stories.service.js';
import { StoryErrorCode, StoryException } from './story.exception.js';
import { whatDeletingRemoves } from './story.mapper.js';
import { StoryRepository } from './story.repository.js';

/** Passages of the legacy's stories the member may see, found by the assembly's search. */
@Injectable()
export class StoriesContextProvider implements ContextSectionProvider {
  readonly section = 'stories' as const;

  constructor(
    private readonly context: SearchContextService,
    private readonly stories: StoriesService,
    private readonly repo: StoryRepository,
    private readonly config: AppConfig,
  ) {}

  get maxItems(): number {
    return this.config.env.SEARCH_CONTEXT_STORIES;
  }

  async collect(request: ContextRequest): Promise<ContextItem[]> {
    if (this.maxItems === 0) return [];
    const outcome = await this.context.outcomeFor(request);
    const picked = outcome.ranked.filter((r) => r.kind === 'story').slice(0, this.maxItems * 2);
    return this.context.toItems(request.user.id, request.user.timezone, picked);
  }

  /** What recall and forgetRecallItem ask of this module about story passages. */
  asRecallSource(): RecallSource {
    return {
      sourceType: 'STORY',
      forgettable: (user: UserEntity, item: Ranked) => item.ownerId === user.id,
      forget: (user, chunkId, confirmed) => this.forget(user, chunkId, confirmed),
    };
  }

  /**
   * Forgetting a passage means deleting its story: only its author may, and only once they
   * confirm, having been told what would go.
   */
  private async forget(
    user: UserEntity,
    chunkId: string,
    confirmed: boolean,
  ): Promise<ForgetOutcome> {
    const [passage] = await this.repo.chunkProvenance([chunkId]);
    if (!passage) throw StoryException.notFound();
    const story = await this.stories.get(user, passage.storyId);
    if (story.authorId !== user.id) {
      throw new StoryException(
        StoryErrorCode.NOT_STORY_AUTHOR,
        "Another member's story cannot be forgotten from your recall.",
      );
    }
    const wouldDelete = whatDeletingRemoves(story);
    if (!confirmed) return { forgotten: false, wouldDelete };
    await this.stories.delete(user, story.id);
    return { forgotten: true, wouldDelete };
  }
}
