import { Field, Float, GraphQLISODateTime, Int, ObjectType } from '@nestjs/graphql';

@ObjectType('SourceShare')
export class SourceShareModel {
  @Field({ description: 'FACT, MEMORY, PERIOD_SUMMARY, PROFILE, STORY, SUMMARY or TURN.' })
  sourceType: string;

  @Field(() => Int, { description: 'Items of this source given to the model.' })
  items: number;

  @Field(() => Float, { description: 'Their share of all items.' })
  share: number;
}

@ObjectType('PathHits')
export class PathHitsModel {
  @Field()
  path: string;

  @Field(() => Int)
  hits: number;
}

@ObjectType('MemoryMetricsReport', {
  description:
    'Retrieval over a period: context assemblies (replies and the context query) and recalls.',
})
export class MemoryMetricsReportModel {
  @Field(() => GraphQLISODateTime)
  from: Date;

  @Field(() => GraphQLISODateTime)
  to: Date;

  @Field(() => Int)
  assemblies: number;

  @Field(() => Int)
  recalls: number;

  @Field(() => Float, { description: 'Share of assemblies that retrieved at least one item.' })
  hitRate: number;

  @Field(() => Float, { description: 'Share that needed the trigram fallback.' })
  fallbackShare: number;

  @Field(() => Float, { description: 'Share that widened beyond the current conversation.' })
  wideningShare: number;

  @Field(() => Float, { description: 'Share that left a candidate out for lack of budget.' })
  truncationShare: number;

  @Field(() => Float, { description: 'Share that ran without a path (dense or lexical).' })
  degradedShare: number;

  @Field(() => Float, { description: 'Share where a stage failed.' })
  failureShare: number;

  @Field(() => Float)
  p50Ms: number;

  @Field(() => Float)
  p95Ms: number;

  @Field(() => Float)
  embedP50Ms: number;

  @Field(() => Float)
  embedP95Ms: number;

  @Field(() => Float)
  searchP50Ms: number;

  @Field(() => Float)
  searchP95Ms: number;

  @Field(() => Float)
  recallP50Ms: number;

  @Field(() => Float)
  recallP95Ms: number;

  @Field(() => Float, { description: 'Mean tokens of the retrieved sections.' })
  meanTokens: number;

  @Field(() => [PathHitsModel], { description: 'Candidates found by each path.' })
  hitsByPath: PathHitsModel[];

  @Field(() => [SourceShareModel], { description: 'Items given to the model, by source.' })
  composition: SourceShareModel[];
}
