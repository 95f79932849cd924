import { ArgsType, Field, ID, InputType, Int } from '@nestjs/graphql';
import { IsEnum, IsInt, IsOptional, IsString, IsUUID, Matches, Max, Min } from 'class-validator';
import { ForwardPageArgs } from '../../common/pagination/connection.js';
import { SummaryPeriod } from '../models/period-summary.model.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MESSAGE = 'must be a date written YYYY-MM-DD';

@InputType()
export class SummarizePeriodInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => SummaryPeriod)
  @IsEnum(SummaryPeriod)
  period: SummaryPeriod;

  @Field({ description: 'The first day of the period (a Monday for a week), YYYY-MM-DD.' })
  @IsString()
  @Matches(DAY, { message: DAY_MESSAGE })
  start: string;
}

@InputType()
export class BackfillPeriodSummariesInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field({ description: 'First day of the range, YYYY-MM-DD.' })
  @IsString()
  @Matches(DAY, { message: DAY_MESSAGE })
  from: string;

  @Field({ description: 'Last day of the range (included), YYYY-MM-DD.' })
  @IsString()
  @Matches(DAY, { message: DAY_MESSAGE })
  to: string;
}

@ArgsType()
export class PeriodSummariesArgs extends ForwardPageArgs {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => SummaryPeriod, { nullable: true, description: 'All three when not given.' })
  @IsOptional()
  @IsEnum(SummaryPeriod)
  period?: SummaryPeriod;
}

@ArgsType()
export class CompareYearsArgs {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => Int)
  @IsInt()
  @Min(1900)
  @Max(9999)
  year: number;

  @Field(() => Int)
  @IsInt()
  @Min(1900)
  @Max(9999)
  otherYear: number;

  @Field(() => Int, { nullable: true, description: '1..12: compare that month of both years.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(12)
  month?: number;
}
