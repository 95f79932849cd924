import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import {
  ArchiveReason,
  ConversationMode,
  MemoryChangeAction,
  MemoryExportFormat,
  MemoryHistoryAction,
  MemorySaveOutcome,
  MemorySource,
  MemoryStatus,
  MemoryType,
} from '../memory.enums.js';

@ObjectType('MemoryHistoryEntry', { description: "One change in a memory's life." })
export class MemoryHistoryEntryModel {
  @Field(() => GraphQLISODateTime)
  at: Date;

  @Field(() => MemoryHistoryAction)
  action: MemoryHistoryAction;

  @Field(() => MemoryStatus, { nullable: true, description: 'The status before the change.' })
  fromStatus: MemoryStatus | null;

  @Field(() => ID, {
    nullable: true,
    description: 'The memory that replaced this one (SUPERSEDED).',
  })
  relatedMemoryId: string | null;

  @Field(() => String, { nullable: true })
  reason: string | null;

  @Field(() => JSONObjectScalar, {
    nullable: true,
    description: 'Extra facts, such as the original ids of an imported memory.',
  })
  details: Record<string, unknown> | null;
}

@ObjectType('Memory', {
  description:
    'Something Keepsake remembers about you, to personalise replies. Only you can see it.',
})
export class MemoryModel {
  @Field(() => ID)
  id: string;

  @Field(() => MemoryType)
  type: MemoryType;

  @Field()
  content: string;

  @Field(() => Float, { description: 'How sure the extraction was, 0 to 1.' })
  confidence: number;

  @Field(() => MemorySource)
  source: MemorySource;

  @Field(() => ID, {
    nullable: true,
    description: 'The legacy it belongs to; null for a global memory, used with every legacy.',
  })
  legacyId: string | null;

  @Field(() => ID, { nullable: true, description: 'The conversation it was extracted from.' })
  conversationId: string | null;

  @Field(() => ID, { nullable: true, description: 'Your turn it was extracted from.' })
  sourceMessageId: string | null;

  @Field(() => Int, { nullable: true })
  sourceTurnIndex: number | null;

  @Field(() => ConversationMode, {
    nullable: true,
    description: "Whether Keepsake's agent or your own client wrote the reply of that exchange.",
  })
  conversationMode: ConversationMode | null;

  @Field(() => String, {
    nullable: true,
    description: 'For imported memories: their id in the system they came from.',
  })
  sourceReference: string | null;

  @Field(() => Int, { description: 'Times it was restated or given to the agent for a reply.' })
  referenceCount: number;

  @Field(() => GraphQLISODateTime, { nullable: true })
  lastReferencedAt: Date | null;

  @Field(() => MemoryStatus)
  status: MemoryStatus;

  @Field(() => GraphQLISODateTime, { description: 'Since when it holds.' })
  validFrom: Date;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'Until when it held (set when superseded).',
  })
  validTo: Date | null;

  /** Not exposed: resolved through `supersededBy` (a Memory) by MemoryResolver. */
  supersededBy?: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  archivedAt: Date | null;

  @Field(() => ArchiveReason, { nullable: true })
  archiveReason: ArchiveReason | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When you forgot it.' })
  deletedAt: Date | null;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description:
      'For a forgotten memory: restorable until then, after which it and its vectors are deleted for good.',
  })
  restorableUntil: Date | null;

  @Field(() => [MemoryHistoryEntryModel])
  history: MemoryHistoryEntryModel[];

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt: Date;
}

@ObjectType()
export class MemoryConnection extends ConnectionType(MemoryModel, 'Memory') {}

@ObjectType('RememberThisPayload')
export class RememberThisPayload {
  @Field(() => MemoryModel, {
    description: 'The memory saved, or the existing one it restated.',
  })
  memory: MemoryModel;

  @Field(() => MemorySaveOutcome)
  outcome: MemorySaveOutcome;

  @Field(() => [ID], { description: 'Older memories it contradicted and replaced.' })
  supersededIds: string[];
}

@ObjectType('ForgetMemoriesPayload')
export class ForgetMemoriesPayload {
  @Field(() => Int)
  forgottenCount: number;

  @Field(() => [ID], {
    description: 'Each can be restored with restoreMemory until restorableUntil.',
  })
  memoryIds: string[];

  @Field(() => GraphQLISODateTime, { nullable: true })
  restorableUntil: Date | null;
}

@ObjectType('MemoryExport')
export class MemoryExportModel {
  @Field(() => MemoryExportFormat)
  format: MemoryExportFormat;

  @Field({ description: 'A file name to save it under.' })
  filename: string;

  @Field()
  contentType: string;

  @Field(() => Int)
  count: number;

  @Field({ description: 'The export itself: importMemories takes the JSON form back.' })
  data: string;
}

@ObjectType('ImportMemoriesPayload')
export class ImportMemoriesPayload {
  @Field(() => Int, { description: 'New memories stored.' })
  importedCount: number;

  @Field(() => Int, {
    description: 'Memories you already had (same text, or imported before): merged, not added.',
  })
  mergedCount: number;

  @Field(() => Int, { description: 'Forgotten (DELETED) memories in the file, not imported.' })
  skippedCount: number;

  @Field(() => [ID])
  memoryIds: string[];
}

@ObjectType('MemoryTypeCount')
export class MemoryTypeCount {
  @Field(() => MemoryType)
  type: MemoryType;

  @Field(() => Int)
  count: number;
}

@ObjectType('MemoryStatusCount')
export class MemoryStatusCount {
  @Field(() => MemoryStatus)
  status: MemoryStatus;

  @Field(() => Int)
  count: number;
}

@ObjectType('MemoryStats')
export class MemoryStatsModel {
  @Field(() => Int, { description: 'Memories held (active, archived and forgotten).' })
  total: number;

  @Field(() => [MemoryTypeCount], { description: 'Active and archived memories by type.' })
  byType: MemoryTypeCount[];

  @Field(() => [MemoryStatusCount])
  byStatus: MemoryStatusCount[];

  @Field(() => Int, { description: 'Your turns the extraction job examined.' })
  turnsExamined: number;

  @Field(() => Int, { description: 'Memories the extraction job created.' })
  memoriesExtracted: number;

  @Field(() => Float, { description: 'Memories created per 10 turns examined.' })
  creationRatePer10Turns: number;

  @Field(() => Int, { description: 'Assistant turns in your conversations.' })
  replies: number;

  @Field(() => Int, { description: 'Assistant turns that were given at least one memory.' })
  repliesUsingMemories: number;

  @Field(() => Float, { description: 'repliesUsingMemories / replies (0 when there are none).' })
  replyMemoryShare: number;

  @Field(() => Int, { description: 'Extracted memories that restated one you had.' })
  duplicatesMerged: number;

  @Field(() => Float, {
    description: 'duplicatesMerged / (memoriesExtracted + duplicatesMerged).',
  })
  duplicateRate: number;
}

@ObjectType('MemoryChanged', {
  description: 'A change to your memories, so a client can show "saved" with an Undo.',
})
export class MemoryChangedModel {
  @Field(() => MemoryChangeAction)
  action: MemoryChangeAction;

  @Field(() => [ID])
  memoryIds: string[];

  @Field(() => MemoryModel, {
    nullable: true,
    description: 'The memory after the change, when one memory changed.',
  })
  memory: MemoryModel | null;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'FORGOTTEN: restoreMemory undoes it until then; null when deletion was immediate.',
  })
  undoUntil: Date | null;

  @Field(() => GraphQLISODateTime)
  at: Date;
}
