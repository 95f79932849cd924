import { Field, GraphQLISODateTime, Int, ObjectType } from '@nestjs/graphql';

@ObjectType('EmbeddingModelInfo')
export class EmbeddingModelInfo {
  @Field()
  model: string;

  @Field(() => Int)
  dimensions: number;

  @Field({ description: 'ACTIVE (used by search), BUILDING (being filled) or RETIRED.' })
  state: string;

  @Field(() => GraphQLISODateTime, { nullable: true })
  activatedAt: Date | null;
}

@ObjectType('EmbeddingKindProgress')
export class EmbeddingKindProgress {
  @Field({ description: 'segment, summary, fact or memory.' })
  kind: string;

  @Field(() => Int)
  total: number;

  @Field(() => Int, { description: 'Rows with a vector from the configured model.' })
  embedded: number;

  @Field(() => Int)
  missing: number;
}

@ObjectType('EmbeddingStatus')
export class EmbeddingStatusModel {
  @Field(() => String, { nullable: true, description: 'The model search uses.' })
  activeModel: string | null;

  @Field({ description: 'The model new text is embedded with (EMBEDDINGS).' })
  configuredModel: string;

  @Field(() => Int)
  dimensions: number;

  @Field({ description: 'True while vectors for the configured model are being filled.' })
  reembedding: boolean;

  @Field(() => [EmbeddingModelInfo])
  models: EmbeddingModelInfo[];

  @Field(() => [EmbeddingKindProgress])
  kinds: EmbeddingKindProgress[];
}
