import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import {
  FactAction,
  FactCategory,
  FactChange,
  FactSourceKind,
  FactStatus,
  FactVisibility,
} from '../fact.enums.js';

@ObjectType('Fact', {
  description:
    'A fact about the legacy, owned by the member who stated it. Private to its author unless shared.',
})
export class FactModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field(() => ID)
  authorId: string;

  @Field(() => FactCategory)
  category: FactCategory;

  @Field({ description: 'One sentence.' })
  content: string;

  @Field(() => FactVisibility)
  visibility: FactVisibility;

  @Field(() => FactStatus)
  status: FactStatus;

  @Field(() => Float, { description: '0 to 1; 1 for facts written by hand.' })
  confidence: number;

  @Field(() => Int, { description: 'How many times it was said (its sources).' })
  mentionCount: number;

  @Field(() => ID, {
    nullable: true,
    description: 'The conversation it was first said in (its author only; null for facts by hand).',
  })
  sourceConversationId: string | null;

  @Field(() => Int, { nullable: true, description: 'First turn index of its source range.' })
  sourceRangeStart: number | null;

  @Field(() => Int, { nullable: true, description: 'Last turn index of its source range.' })
  sourceRangeEnd: number | null;

  @Field(() => [ID], { description: 'The turns it was taken from (its author only).' })
  sourceMessageIds: string[];

  @Field(() => GraphQLISODateTime, { description: 'When it was said or written.' })
  validFrom: Date;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'When a newer fact superseded it.',
  })
  validTo: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  deletedAt: Date | null;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt: Date;

  /** Not exposed: resolved through `supersededBy` only when the viewer may see it. */
  supersededBy?: string | null;

  /** Whose view this is (not in the schema): the caller's, or FAMILY_VIEWER for a preview. */
  viewerId?: string;
}

@ObjectType()
export class FactConnection extends ConnectionType(FactModel, 'Fact') {}

@ObjectType('FactSource', { description: 'One mention of a fact.' })
export class FactSourceModel {
  @Field(() => ID)
  id: string;

  @Field(() => FactSourceKind)
  kind: FactSourceKind;

  @Field(() => ID, { nullable: true })
  conversationId: string | null;

  @Field(() => Int, { nullable: true })
  rangeStart: number | null;

  @Field(() => Int, { nullable: true })
  rangeEnd: number | null;

  @Field(() => [ID])
  messageIds: string[];

  @Field(() => ID, { nullable: true, description: 'The story or document it was read in.' })
  storyId: string | null;

  @Field(() => Int, { nullable: true, description: 'Its page there.' })
  page: number | null;

  @Field(() => GraphQLISODateTime, { description: 'When it was said.' })
  occurredAt: Date;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType('FactHistoryEntry', { description: 'A fact as it stood after one change.' })
export class FactHistoryEntryModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  factId: string;

  @Field(() => FactAction)
  action: FactAction;

  @Field(() => ID, { nullable: true, description: 'Who did it; null when Keepsake did.' })
  actorId: string | null;

  @Field()
  content: string;

  @Field(() => FactCategory)
  category: FactCategory;

  @Field(() => FactVisibility)
  visibility: FactVisibility;

  @Field(() => FactStatus)
  status: FactStatus;

  @Field(() => Int)
  mentionCount: number;

  @Field(() => String, { nullable: true, description: 'Why, for supersessions and moderation.' })
  detail: string | null;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  /** Resolved through `relatedFact` only when the viewer may see it. */
  relatedFactId?: string | null;
}

@ObjectType('FactChangedEvent')
export class FactChangedEventModel {
  @Field(() => FactChange)
  change: FactChange;

  @Field(() => ID)
  factId: string;

  @Field(() => FactModel, { nullable: true, description: 'Null for REMOVED.' })
  fact: FactModel | null;

  @Field(() => ID, { nullable: true, description: 'Who made the change; null when Keepsake did.' })
  actorId: string | null;
}
