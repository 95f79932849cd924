import { ArgsType, Field, GraphQLISODateTime } from '@nestjs/graphql';
import { IsDate } from 'class-validator';

@ArgsType()
export class UpliftPeriodArgs {
  @Field(() => GraphQLISODateTime)
  @IsDate()
  from: Date;

  @Field(() => GraphQLISODateTime)
  @IsDate()
  to: Date;
}
