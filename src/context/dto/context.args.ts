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
import { MAX_CONTEXT_BUDGET } from '../context.config.js';

/** Queries are messages: as long as one may be, and never blank. */
export const MAX_QUERY_LENGTH = 32_000;

@ArgsType()
export class ContextArgs {
  @Field(() => ID)
  @IsUUID()
  conversationId: string;

  @Field({ description: 'The message to assemble context for.' })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_QUERY_LENGTH)
  query: string;

  @Field(() => Int, {
    nullable: true,
    description: `Tokens for the retrieved sections; defaults to CONTEXT_TOKEN_BUDGET, at most ${MAX_CONTEXT_BUDGET}.`,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_CONTEXT_BUDGET)
  budget?: number;
}

@ArgsType()
export class RetrievalDebugArgs {
  @Field(() => ID)
  @IsUUID()
  conversationId: string;

  @Field()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_QUERY_LENGTH)
  query: string;
}
