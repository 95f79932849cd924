import { Field, InputType } from '@nestjs/graphql';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';

@InputType()
export class UpdateMeInput {
  @Field(() => String, {
    nullable: true,
    description:
      'The name the family sees: one line of 1 to 100 characters (no line breaks, tabs or invisible characters).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(400)
  displayName?: string;

  @Field(() => String, { nullable: true, description: 'An IANA time zone such as Europe/Paris.' })
  @IsOptional()
  @IsString()
  timezone?: string;

  @Field(() => Boolean, { nullable: true })
  @IsOptional()
  @IsBoolean()
  rememberByDefault?: boolean;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Pause memory: nothing new is remembered and no memory is used in replies.',
  })
  @IsOptional()
  @IsBoolean()
  memoryPaused?: boolean;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Keep memories older than two years even when they are not referenced.',
  })
  @IsOptional()
  @IsBoolean()
  longTermMemory?: boolean;
}
