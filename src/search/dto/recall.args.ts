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
/** How far down its ranking one recall may be paged. */
export const RECALL_MAX_DEPTH = 200;

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

  @Field(() => Int, {
    nullable: true,
    description: `Page size: at most ${MAX_RECALL}; 10 by default.`,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_RECALL)
  first?: number;

  @Field(() => String, {
    nullable: true,
    description: `An edge's cursor: the answers after it (the ranking is asked again; at most ${RECALL_MAX_DEPTH} answers in all).`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  after?: string;
}
