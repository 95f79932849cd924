import type { LeftBehindStoryModel, StoryModel } from './models/story.model.js';
import type { StoryEntity } from './story.entity.js';
import { StoryKind } from './story.enums.js';

/**
 * What deleting a story removes, said once for deleteStory (Story.wouldDelete) and
 * forgetRecallItem: its row takes its file and passages, their vectors go by trigger, and a fact
 * whose last mention was one of its passages goes with that mention (fact_sources_forget).
 */
export function whatDeletingRemoves(
  story: Pick<StoryEntity, 'kind' | 'title' | 'pageCount'>,
): string {
  const what = story.kind === StoryKind.DOCUMENT ? 'document' : 'story';
  const pages = `${story.pageCount} page${story.pageCount === 1 ? '' : 's'}`;
  return `The ${what} “${story.title}” (${pages}), its file and every passage indexed from it, and the facts known only from it.`;
}

/** A story as the API shows it (its pages stay behind: `pages` resolves them). */
export function toStoryModel(story: StoryEntity): StoryModel {
  return {
    id: story.id,
    legacyId: story.legacyId,
    authorId: story.authorId,
    title: story.title,
    kind: story.kind,
    format: story.format,
    visibility: story.visibility,
    status: story.status,
    failureReason: story.failureReason,
    pageCount: story.pageCount,
    sizeBytes: story.sizeBytes,
    fileName: story.fileName,
    mimeType: story.mimeType,
    occurredAt: story.occurredAt,
    indexedChunks: story.indexedChunks,
    totalChunks: story.totalChunks,
    downloadPath: `/stories/${story.id}/file`,
    wouldDelete: whatDeletingRemoves(story),
    createdAt: story.createdAt,
    updatedAt: story.updatedAt,
  };
}

/** A story its author left behind: what they need to find and delete it, none of its text. */
export function toLeftBehindStoryModel(story: StoryEntity): LeftBehindStoryModel {
  return {
    id: story.id,
    legacyId: story.legacyId,
    title: story.title,
    kind: story.kind,
    format: story.format,
    visibility: story.visibility,
    sizeBytes: story.sizeBytes,
    fileName: story.fileName,
    createdAt: story.createdAt,
  };
}
