import { ArgsType, Field, GraphQLISODateTime, ID, InputType } from '@nestjs/graphql';
import { IsDate, IsEnum, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { ForwardPageArgs } from '../../common/pagination/connection.js';
import { StoryKind, StoryStatus, StoryVisibility } from '../story.enums.js';

@InputType()
export class AddStoryInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field({ description: 'At most 300 characters.' })
  @IsString()
  @MaxLength(300)
  title: string;

  @Field({ description: 'Text or Markdown, at most STORY_MAX_CHARS characters.' })
  @IsString()
  content: string;

  @Field(() => GraphQLISODateTime, { nullable: true })
  @IsOptional()
  @IsDate()
  occurredAt?: Date | null;

  @Field(() => StoryVisibility, { nullable: true, description: 'PRIVATE unless given.' })
  @IsOptional()
  @IsEnum(StoryVisibility)
  visibility?: StoryVisibility | null;
}

@InputType()
export class UpdateStoryInput {
  @Field(() => ID)
  @IsUUID()
  id: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  title?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'A new text (stories written in the app only); it is indexed again.',
  })
  @IsOptional()
  @IsString()
  content?: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  @IsOptional()
  @IsDate()
  occurredAt?: Date | null;
}

@InputType()
export class StoryFilter {
  @Field(() => StoryKind, { nullable: true })
  @IsOptional()
  @IsEnum(StoryKind)
  kind?: StoryKind | null;

  @Field(() => StoryVisibility, { nullable: true })
  @IsOptional()
  @IsEnum(StoryVisibility)
  visibility?: StoryVisibility | null;

  @Field(() => StoryStatus, { nullable: true })
  @IsOptional()
  @IsEnum(StoryStatus)
  status?: StoryStatus | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  @IsUUID()
  authorId?: string | null;

  @Field(() => String, { nullable: true, description: 'Words of the title or the text.' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  search?: string | null;
}

@ArgsType()
export class StoriesArgs extends ForwardPageArgs {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;
}
