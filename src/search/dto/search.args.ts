import { ArgsType, Field, GraphQLISODateTime, ID, Int } from '@nestjs/graphql';
import {
  IsDate,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { MAX_CONTEXT_BUDGET } from '../../context/context.config.js';

/** Queries are messages: as long as one may be, and never blank. */
export const MAX_QUERY_LENGTH = 32_000;
export const MAX_RECALL = 50;

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

@ArgsType()
export class MetricsReportArgs {
  @Field(() => GraphQLISODateTime)
  @IsDate()
  from: Date;

  @Field(() => GraphQLISODateTime)
  @IsDate()
  to: Date;
}
