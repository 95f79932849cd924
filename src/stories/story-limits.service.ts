import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type { UserEntity } from '../identity/user.entity.js';
import { QuotasService } from '../quotas/quotas.service.js';
import { StoryErrorCode, StoryException } from './story.exception.js';
import { StoryRepository } from './story.repository.js';

const TITLE_MAX = 300;

/** What a story is held to: its title, its text, the daily count, and its author's room. */
@Injectable()
export class StoryLimitsService {
  constructor(
    private readonly repo: StoryRepository,
    private readonly quotas: QuotasService,
    private readonly config: AppConfig,
  ) {}

  /** STORIES_PER_DAY, counted with the story it allows. */
  countStory(m: EntityManager, user: UserEntity): Promise<void> {
    return this.quotas.consume(m, {
      scope: 'stories.added',
      subjectId: user.id,
      limit: this.config.env.STORIES_PER_DAY,
      windowMs: 24 * 60 * 60 * 1000,
      message: `At most ${this.config.env.STORIES_PER_DAY} stories and documents can be added a day.`,
    });
  }

  /**
   * Whether the author has room for `bytes` more in the legacy (MEMBER_STORAGE_MAX_BYTES). Only
   * their own stories count: the answer never depends on what another member keeps privately.
   */
  async assertRoom(
    m: EntityManager,
    user: UserEntity,
    legacyId: string,
    bytes: number,
    replacing: string | null = null,
  ): Promise<void> {
    // One writer per member and legacy at a time: the sum then the write stay within the limit.
    await this.quotas.serialize(m, `stories:storage:${legacyId}:${user.id}`);
    const used = await this.repo.storageUsed(m, legacyId, user.id, replacing);
    const max = this.config.env.MEMBER_STORAGE_MAX_BYTES;
    if (used + bytes <= max) return;
    throw new StoryException(
      StoryErrorCode.STORAGE_FULL,
      `Your stories and documents in this legacy take ${formatMb(used)} of the ${formatMb(max)} each member may keep: ${formatMb(bytes)} more does not fit. Delete some of yours first.`,
      'file',
    );
  }

  title(raw: string): string {
    const title = raw.replace(/\s+/g, ' ').trim();
    if (!title) {
      throw new StoryException(StoryErrorCode.INVALID_STORY, 'A story needs a title.', 'title');
    }
    if (title.length > TITLE_MAX) {
      throw new StoryException(
        StoryErrorCode.INVALID_STORY,
        `A title has at most ${TITLE_MAX} characters.`,
        'title',
      );
    }
    return title;
  }

  content(raw: string): string {
    const content = raw.replace(/\r\n?/g, '\n').replaceAll(String.fromCharCode(0), '');
    if (!content.trim()) {
      throw new StoryException(StoryErrorCode.INVALID_STORY, 'A story needs some text.', 'content');
    }
    if (content.length > this.config.env.STORY_MAX_CHARS) {
      throw new StoryException(
        StoryErrorCode.INVALID_STORY,
        `A story has at most ${this.config.env.STORY_MAX_CHARS} characters; upload a long text as a document.`,
        'content',
      );
    }
    return content;
  }
}

function formatMb(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
}
