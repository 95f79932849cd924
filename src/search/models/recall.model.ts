import { Field, Float, ID, ObjectType } from '@nestjs/graphql';
import { ProvenanceModel, ScoreComponentModel } from '../../context/models/context.model.js';

@ObjectType('RecallItem', {
  description: 'Something Keepsake remembers, from your memories, facts, summaries or turns.',
})
export class RecallItemModel {
  @Field(() => ID, {
    description: 'Stable: the source type and the source id (pass it to forgetRecallItem).',
  })
  id: string;

  @Field({ description: 'FACT, MEMORY, PERIOD_SUMMARY, SUMMARY or TURN.' })
  sourceType: string;

  @Field(() => ID)
  sourceId: string;

  @Field()
  text: string;

  @Field(() => Float)
  score: number;

  @Field(() => [ScoreComponentModel])
  scores: ScoreComponentModel[];

  @Field({
    description:
      'Whether you can forget it from here: your memories, and facts you wrote. Summaries and turns are part of the conversation log and cannot be forgotten one by one.',
  })
  forgettable: boolean;

  @Field(() => ProvenanceModel)
  provenance: ProvenanceModel;
}

@ObjectType('ForgetRecallItemPayload')
export class ForgetRecallItemPayload {
  @Field(() => ID)
  id: string;

  @Field()
  sourceType: string;

  @Field({ description: 'A memory is forgotten (restorable for a while); a fact deleted.' })
  forgotten: boolean;
}
