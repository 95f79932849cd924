import { Field, ID, InputType } from '@nestjs/graphql';
import { IsBoolean, IsEnum, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { FactCategory, FactStatus, FactVisibility } from '../fact.enums.js';

/** A fact's length once tidied; the inputs take more, so that a long one gets this error. */
export const MAX_FACT_CONTENT = 500;
const CONTENT = `One sentence about the legacy, at most ${MAX_FACT_CONTENT} characters.`;

@InputType()
export class AddFactInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field({ description: CONTENT })
  @IsString()
  @MaxLength(2000)
  content: string;

  @Field(() => FactCategory)
  @IsEnum(FactCategory)
  category: FactCategory;

  @Field(() => FactVisibility, { nullable: true, description: 'PRIVATE unless given.' })
  @IsOptional()
  @IsEnum(FactVisibility)
  visibility?: FactVisibility;
}

@InputType()
export class UpdateFactInput {
  @Field(() => ID)
  @IsUUID()
  id: string;

  @Field(() => String, { nullable: true, description: CONTENT })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  content?: string;

  @Field(() => FactCategory, { nullable: true })
  @IsOptional()
  @IsEnum(FactCategory)
  category?: FactCategory;
}

@InputType()
export class FactFilter {
  @Field(() => FactVisibility, { nullable: true })
  @IsOptional()
  @IsEnum(FactVisibility)
  visibility?: FactVisibility;

  @Field(() => FactCategory, { nullable: true })
  @IsOptional()
  @IsEnum(FactCategory)
  category?: FactCategory;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  @IsUUID()
  authorId?: string;

  @Field(() => FactStatus, { nullable: true, description: 'ACTIVE unless given.' })
  @IsOptional()
  @IsEnum(FactStatus)
  status?: FactStatus;

  @Field(() => String, {
    nullable: true,
    description: 'Matches by keywords and by meaning; results come best first.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  search?: string;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'As any plain member sees them: the facts shared with the family, with the status, mention count, confidence and last change the family sees, your own included (without their sources).',
  })
  @IsOptional()
  @IsBoolean()
  asFamily?: boolean;
}
