import { Field, ID, InputType } from '@nestjs/graphql';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';

export const PROFILE_LIMITS = {
  preferredName: 80,
  pronouns: 40,
  homeTown: 120,
  relationship: 120,
  relationships: 50,
  language: 40,
  languages: 10,
  interest: 80,
  interests: 20,
  conversationGoals: 1000,
  notes: 4000,
} as const;

@InputType({ description: 'Your relationship to one legacy you are a member of.' })
export class ProfileRelationshipInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => String, {
    nullable: true,
    description: `Such as "granddaughter" or "his neighbour for 30 years", at most ${PROFILE_LIMITS.relationship} characters; null or blank removes it.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(PROFILE_LIMITS.relationship)
  relationship?: string | null;
}

@InputType({
  description:
    'A change to your profile: a field left out stays as it is; null, a blank string or an empty list clears it.',
})
export class UpdateProfileInput {
  @Field(() => String, {
    nullable: true,
    description: `At most ${PROFILE_LIMITS.preferredName} characters.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(PROFILE_LIMITS.preferredName)
  preferredName?: string | null;

  @Field(() => String, {
    nullable: true,
    description: `Such as "she/her", at most ${PROFILE_LIMITS.pronouns} characters.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(PROFILE_LIMITS.pronouns)
  pronouns?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'A date, YYYY-MM-DD, between 1900 and today.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^(\d{4}-\d{2}-\d{2})?$/, { message: 'birthday must be a date, YYYY-MM-DD' })
  birthday?: string | null;

  @Field(() => String, {
    nullable: true,
    description: `At most ${PROFILE_LIMITS.homeTown} characters.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(PROFILE_LIMITS.homeTown)
  homeTown?: string | null;

  @Field(() => [ProfileRelationshipInput], {
    nullable: true,
    description: `Your relationship to each legacy (at most ${PROFILE_LIMITS.relationships} per call): each entry sets or removes the one to its legacy; legacies not listed keep theirs. Only legacies you are a member of.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PROFILE_LIMITS.relationships)
  @ValidateNested({ each: true })
  @Type(() => ProfileRelationshipInput)
  relationships?: ProfileRelationshipInput[] | null;

  @Field(() => [String], {
    nullable: true,
    description: `Language codes or names ("en", "pt-BR", "Irish"), at most ${PROFILE_LIMITS.languages}, each at most ${PROFILE_LIMITS.language} characters.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PROFILE_LIMITS.languages)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(PROFILE_LIMITS.language, { each: true })
  @Matches(/^[\p{L}][\p{L}\p{M} ()'_-]*$/u, {
    each: true,
    message: 'each language must be a code or a name, in letters',
  })
  languages?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description: `At most ${PROFILE_LIMITS.interests}, each at most ${PROFILE_LIMITS.interest} characters.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PROFILE_LIMITS.interests)
  @IsString({ each: true })
  @MaxLength(PROFILE_LIMITS.interest, { each: true })
  interests?: string[] | null;

  @Field(() => String, {
    nullable: true,
    description: `What you want from the conversations, at most ${PROFILE_LIMITS.conversationGoals} characters.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(PROFILE_LIMITS.conversationGoals)
  conversationGoals?: string | null;

  @Field(() => String, {
    nullable: true,
    description: `Anything else, in your words, at most ${PROFILE_LIMITS.notes} characters.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(PROFILE_LIMITS.notes)
  notes?: string | null;
}
