import { Field, Float, ID, ObjectType } from '@nestjs/graphql';
import { ProvenanceModel, ScoreComponentModel } from '../../context/models/context.model.js';

@ObjectType('RecallItem', {
  description:
    'Something Keepsake remembers, from your memories, facts, summaries, turns, stories or (with your consent) your profile.',
})
export class RecallItemModel {
  @Field(() => ID, {
    description:
      'Stable: the source type and the source id (pass it to forgetRecallItem); for your profile, `profile:<field>` (`profile:relationship:<legacyId>`).',
  })
  id: string;

  @Field({ description: 'FACT, MEMORY, PERIOD_SUMMARY, PROFILE, STORY, SUMMARY or TURN.' })
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
      'Whether you can forget it from here: your memories, facts you wrote, your period summaries, your profile’s entries and your stories (after confirmation). Summaries and turns are part of the conversation log and cannot be forgotten one by one.',
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

  @Field({
    description:
      'A memory is forgotten (restorable for a while); a fact, a period summary, a profile entry or (confirmed) a story deleted.',
  })
  forgotten: boolean;

  @Field({
    description:
      'Nothing was deleted: forgetting this item deletes more than itself (a story passage: the whole story). Call again with confirm: true.',
  })
  requiresConfirmation: boolean;

  @Field(() => String, { nullable: true, description: 'What forgetting it deletes.' })
  wouldDelete: string | null;
}
