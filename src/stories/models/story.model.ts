import { Field, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import {
  StoryChange,
  StoryFormat,
  StoryKind,
  StoryStatus,
  StoryVisibility,
} from '../story.enums.js';

@ObjectType('Story', {
  description:
    'A story written in the app or a document uploaded to a legacy. Its author’s; private unless shared, like a fact.',
})
export class StoryModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field(() => ID)
  authorId: string;

  @Field()
  title: string;

  @Field(() => StoryKind)
  kind: StoryKind;

  @Field(() => StoryFormat)
  format: StoryFormat;

  @Field(() => StoryVisibility)
  visibility: StoryVisibility;

  @Field(() => StoryStatus, {
    description:
      'PROCESSING while it is split and indexed, READY when findable, FAILED (see failureReason).',
  })
  status: StoryStatus;

  @Field(() => String, { nullable: true })
  failureReason: string | null;

  @Field(() => Int, { description: 'Pages (1 for text, Markdown and DOCX).' })
  pageCount: number;

  @Field(() => Int, { description: 'Size of the original file in bytes.' })
  sizeBytes: number;

  @Field(() => String, { nullable: true, description: 'The uploaded file’s name.' })
  fileName: string | null;

  @Field(() => String, { nullable: true })
  mimeType: string | null;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'When what it tells happened, if given.',
  })
  occurredAt: Date | null;

  @Field(() => Int, { description: 'Passages indexed for search so far.' })
  indexedChunks: number;

  @Field(() => Int, { description: 'Passages it was split into (0 until split).' })
  totalChunks: number;

  @Field({ description: 'Where the original file is downloaded (GET, same authentication).' })
  downloadPath: string;

  @Field({
    description:
      'What deleting it removes (deleteStory, or forgetRecallItem from one of its passages), in the words to show before asking: forgetRecallItem’s wouldDelete.',
  })
  wouldDelete: string;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt: Date;
}

@ObjectType('StoryConnection')
export class StoryConnection extends ConnectionType(StoryModel, 'Story') {}

@ObjectType('LeftBehindStory', {
  description:
    'One of your stories in a legacy you are no longer a member of: yours to delete (deleteStory); its text and file are no longer readable.',
})
export class LeftBehindStoryModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field()
  title: string;

  @Field(() => StoryKind)
  kind: StoryKind;

  @Field(() => StoryFormat)
  format: StoryFormat;

  @Field(() => StoryVisibility)
  visibility: StoryVisibility;

  @Field(() => Int, { description: 'Size of the original file in bytes.' })
  sizeBytes: number;

  @Field(() => String, { nullable: true, description: 'The uploaded file’s name.' })
  fileName: string | null;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType('LeftBehindStoryConnection')
export class LeftBehindStoryConnection extends ConnectionType(
  LeftBehindStoryModel,
  'LeftBehindStory',
) {}

@ObjectType('StoryPage')
export class StoryPageModel {
  @Field(() => Int)
  number: number;

  @Field()
  text: string;
}

@ObjectType('StoryChangedEvent', {
  description: 'A change to a story you may see; REMOVED when one stops being visible to you.',
})
export class StoryChangedEventModel {
  @Field(() => StoryChange)
  change: StoryChange;

  @Field(() => ID)
  storyId: string;

  @Field(() => StoryModel, { nullable: true, description: 'Null for DELETED and REMOVED.' })
  story: StoryModel | null;
}

@ObjectType('ExtractStoryPayload')
export class ExtractStoryPayload {
  @Field(() => StoryModel)
  story: StoryModel;

  @Field(() => Int, { description: 'Passages read for facts by this call.' })
  passagesRead: number;

  @Field(() => Int, { description: 'Facts found in them (new ones, or mentions of known ones).' })
  factsFound: number;

  @Field(() => Int, {
    description:
      'Passages still to read: the model or your model budget ran out; the rest continues in the background.',
  })
  remaining: number;
}
