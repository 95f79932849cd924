/** The job that indexes a story (story-indexer.service.ts), enqueued with every new text. */
export const STORY_INDEX_JOB = 'stories:index';
