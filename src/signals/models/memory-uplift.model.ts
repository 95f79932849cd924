import { Field, Float, GraphQLISODateTime, Int, ObjectType } from '@nestjs/graphql';

@ObjectType('UpliftArm', { description: 'One arm of the memory A/B comparison over the period.' })
export class UpliftArmModel {
  @Field(() => Int, { description: 'Conversations with a model-written reply in the period.' })
  conversations: number;

  @Field(() => Int, { description: 'Model-written replies (error turns and notices left out).' })
  replies: number;

  @Field(() => Int, {
    description:
      'Replies that repeated a memory the block held (holdout: would have held, but did not).',
  })
  repliesReferencingMemory: number;

  @Field(() => Float)
  referencedMemoryShare: number;

  @Field(() => Int, { description: 'User turns answered that were "you forgot" complaints.' })
  forgotComplaints: number;

  @Field(() => Float)
  forgotPer100Turns: number;

  @Field(() => Float, { description: 'Mean turns (both sides) of its conversations.' })
  meanConversationTurns: number;
}

@ObjectType('UpliftEstimate', {
  description:
    'With memory minus holdout, with a 95% confidence interval. Null values: an arm has too little data.',
})
export class UpliftEstimateModel {
  @Field(() => Float, { nullable: true })
  difference: number | null;

  @Field(() => Float, { nullable: true })
  low: number | null;

  @Field(() => Float, { nullable: true })
  high: number | null;

  @Field({ description: 'The interval leaves out zero.' })
  significant: boolean;

  @Field({
    description:
      'Wilson/Newcombe for shares and rates, normal approximation (Welch) for the mean length.',
  })
  method: string;
}

@ObjectType('MemoryUplift', {
  description:
    'Does memory help? Replies given the memory block against replies of conversations held out (MEMORY_AB_HOLDOUT).',
})
export class MemoryUpliftModel {
  @Field(() => GraphQLISODateTime)
  from: Date;

  @Field(() => GraphQLISODateTime)
  to: Date;

  @Field(() => Float, { description: 'MEMORY_AB_HOLDOUT now (it may have changed in the period).' })
  holdoutShare: number;

  @Field(() => Float)
  confidence: number;

  @Field(() => UpliftArmModel)
  withMemory: UpliftArmModel;

  @Field(() => UpliftArmModel)
  holdout: UpliftArmModel;

  @Field(() => UpliftEstimateModel, {
    description: 'Difference in the share of replies that referenced a memory.',
  })
  referencedMemory: UpliftEstimateModel;

  @Field(() => UpliftEstimateModel, {
    description: 'Difference in "forgot" complaints per 100 turns (negative: memory helps).',
  })
  forgotPer100Turns: UpliftEstimateModel;

  @Field(() => UpliftEstimateModel, {
    description: 'Difference in mean conversation length, in turns.',
  })
  conversationLength: UpliftEstimateModel;
}
