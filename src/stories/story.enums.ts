import { registerEnumType } from '@nestjs/graphql';

export enum StoryKind {
  /** Written in the app (text or Markdown). */
  STORY = 'STORY',
  /** An uploaded file. */
  DOCUMENT = 'DOCUMENT',
}

export enum StoryFormat {
  TEXT = 'TEXT',
  MARKDOWN = 'MARKDOWN',
  PDF = 'PDF',
  DOCX = 'DOCX',
}

export enum StoryVisibility {
  /** Only its author sees it (the default). */
  PRIVATE = 'PRIVATE',
  /** Every member of the legacy sees it. */
  SHARED = 'SHARED',
}

export enum StoryStatus {
  /** Stored; being split and indexed for search. */
  PROCESSING = 'PROCESSING',
  READY = 'READY',
  FAILED = 'FAILED',
}

/** What happened to a story, as storyChanged reports it. */
export enum StoryChange {
  CREATED = 'CREATED',
  UPDATED = 'UPDATED',
  /** Indexed: findable in recall and the agent's context. */
  READY = 'READY',
  /** It could not be indexed: see failureReason. */
  FAILED = 'FAILED',
  VISIBILITY_CHANGED = 'VISIBILITY_CHANGED',
  DELETED = 'DELETED',
  /** It is no longer visible to you (unshared or deleted). */
  REMOVED = 'REMOVED',
}

registerEnumType(StoryKind, { name: 'StoryKind' });
registerEnumType(StoryFormat, { name: 'StoryFormat' });
registerEnumType(StoryVisibility, {
  name: 'StoryVisibility',
  description: 'PRIVATE: only its author sees it. SHARED: every member of the legacy does.',
});
registerEnumType(StoryStatus, { name: 'StoryStatus' });
registerEnumType(StoryChange, { name: 'StoryChange' });
