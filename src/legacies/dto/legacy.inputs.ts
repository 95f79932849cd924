import { Field, ID, InputType } from '@nestjs/graphql';
import {
  IsEmail,
  IsEnum,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { LegacyRole } from '../legacy-role.enum.js';

@InputType()
export class CreateLegacyInput {
  @Field()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(5000)
  description?: string;

  @Field(() => String, { nullable: true, description: 'ISO date (YYYY-MM-DD).' })
  @IsOptional()
  @IsISO8601({ strict: true })
  bornOn?: string;

  @Field(() => String, { nullable: true, description: 'ISO date (YYYY-MM-DD).' })
  @IsOptional()
  @IsISO8601({ strict: true })
  diedOn?: string;
}

@InputType()
export class UpdateLegacyInput {
  @Field(() => ID)
  @IsUUID()
  id: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(5000)
  description?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsISO8601({ strict: true })
  bornOn?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsISO8601({ strict: true })
  diedOn?: string;

  @Field(() => String, {
    nullable: true,
    description: "The agent's system prompt; an empty string restores the default.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(8000)
  persona?: string;
}

@InputType()
export class AddLegacyMemberInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field()
  @IsEmail()
  @MaxLength(320)
  email: string;

  @Field(() => LegacyRole, { defaultValue: LegacyRole.MEMBER })
  @IsEnum(LegacyRole)
  role: LegacyRole;
}

@InputType()
export class SetLegacyMemberRoleInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => ID)
  @IsUUID()
  userId: string;

  @Field(() => LegacyRole)
  @IsEnum(LegacyRole)
  role: LegacyRole;
}

@InputType()
export class RemoveLegacyMemberInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => ID)
  @IsUUID()
  userId: string;
}
