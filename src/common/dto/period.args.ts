import { ArgsType, Field, GraphQLISODateTime } from '@nestjs/graphql';
import { IsDate } from 'class-validator';

/** A period [from, to) of the operators' reports. */
@ArgsType()
export class PeriodArgs {
  @Field(() => GraphQLISODateTime)
  @IsDate()
  from: Date;

  @Field(() => GraphQLISODateTime)
  @IsDate()
  to: Date;
}
