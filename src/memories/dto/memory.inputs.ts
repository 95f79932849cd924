import { Field, GraphQLISODateTime, ID, InputType } from '@nestjs/graphql';
import { IsDate, IsEnum, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { MemoryStatus, MemoryType } from '../memory.enums.js';

@InputType('MemoryFilter')
export class MemoryFilterInput {
  @Field(() => MemoryType, { nullable: true })
  @IsOptional()
  @IsEnum(MemoryType)
  type?: MemoryType;

  @Field(() => ID, {
    nullable: true,
    description: "Only this legacy's memories (not global ones).",
  })
  @IsOptional()
  @IsUUID()
  legacyId?: string;

  @Field(() => ID, { nullable: true, description: 'Only memories taken from this conversation.' })
  @IsOptional()
  @IsUUID()
  conversationId?: string;

  @Field(() => MemoryStatus, {
    nullable: true,
    description: 'Default: ACTIVE and ARCHIVED. DELETED lists what you can still restore.',
  })
  @IsOptional()
  @IsEnum(MemoryStatus)
  status?: MemoryStatus;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Created at or after.' })
  @IsOptional()
  @IsDate()
  from?: Date;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Created before.' })
  @IsOptional()
  @IsDate()
  to?: Date;

  @Field(() => String, {
    nullable: true,
    description: 'Matches by keywords (full text, typos forgiven) or by meaning; best first.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  search?: string;
}

@InputType()
export class RememberThisInput {
  @Field({ description: 'What to remember, in your words.' })
  @IsString()
  content: string;

  @Field(() => MemoryType, { nullable: true, description: 'Guessed from the text when omitted.' })
  @IsOptional()
  @IsEnum(MemoryType)
  type?: MemoryType;

  @Field(() => ID, {
    nullable: true,
    description: 'Tie it to one legacy; omitted, it is global and used with every legacy.',
  })
  @IsOptional()
  @IsUUID()
  legacyId?: string;
}

@InputType()
export class ForgetMemoriesFilter {
  @Field(() => ID, { nullable: true, description: 'Every memory taken from this conversation.' })
  @IsOptional()
  @IsUUID()
  conversationId?: string;

  @Field(() => ID, { nullable: true, description: 'Every memory taken from this turn.' })
  @IsOptional()
  @IsUUID()
  sourceMessageId?: string;
}
