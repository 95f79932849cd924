import { ArgsType, Field, ID, Int } from '@nestjs/graphql';
import {
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { MAX_QUERY_LENGTH } from '../../context/dto/context.args.js';

export const MAX_RECALL = 50;

@ArgsType()
export class RecallArgs {
  @Field({ description: 'What to remember, in your words.' })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_QUERY_LENGTH)
  query: string;

  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => Int, { nullable: true, description: `At most ${MAX_RECALL}; 10 by default.` })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_RECALL)
  first?: number;
}
