import { Field, Float, ID, ObjectType } from '@nestjs/graphql';
import { PageInfo } from '../../common/pagination/connection.js';
import { SourceType } from '../../context/models/context-enums.model.js';
import { ProvenanceModel, ScoreComponentModel } from '../../context/models/context.model.js';
import type { ContextSourceType } from '../../context/context.types.js';

@ObjectType('RecallItem', {
  description:
    'Something Keepsake remembers, from your memories, facts, summaries, turns, stories or (with your consent) your profile. Its fields are the same whatever question found it; how well it answered one question is on the RecallEdge.',
})
export class RecallItemModel {
  @Field(() => ID, {
    description:
      'Stable: `<sourceType>:<sourceId>` (pass it to forgetRecallItem); for your profile, `profile:<field>` (`profile:relationship:<legacyId>`). ContextItem, ContextItemRef and RetrievalCandidate name the same item by this id, as `recallItemId`.',
  })
  id: string;

  @Field(() => SourceType)
  sourceType: ContextSourceType;

  @Field(() => ID, {
    description:
      "The item's own record: a Fact's or Memory's id, a story passage, a turn passage, a summary or period summary, or a profile entry's key.",
  })
  sourceId: string;

  @Field()
  text: string;

  @Field({
    description:
      'Whether you can forget it from here: your memories, facts you wrote, your period summaries, your profile’s entries and your stories (after confirmation). Summaries and turns are part of the conversation log and cannot be forgotten one by one.',
  })
  forgettable: boolean;

  @Field(() => ProvenanceModel)
  provenance: ProvenanceModel;
}

/** One recall result as the service builds it: the item, and how it ranked for this question. */
export interface RecallHit {
  item: RecallItemModel;
  score: number;
  scores: ScoreComponentModel[];
}

@ObjectType('RecallEdge', {
  description:
    'One answer to one recall: the item, and how well it answered this question. The scores live here, not on the item, so that two recalls that find the same item keep their own.',
})
export class RecallEdgeModel {
  @Field({ description: 'Pass it as `after` for the results that follow this one.' })
  cursor: string;

  @Field(() => RecallItemModel)
  node: RecallItemModel;

  @Field(() => Float, {
    description:
      'How well it answers this question, higher first. Comparable within one recall only: each kind of item is scored on its own scale.',
  })
  score: number;

  @Field(() => [ScoreComponentModel])
  scores: ScoreComponentModel[];
}

@ObjectType('RecallConnection', { description: 'The answers to one recall, best first.' })
export class RecallConnectionModel {
  @Field(() => [RecallEdgeModel])
  edges: RecallEdgeModel[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

@ObjectType('ForgetRecallItemPayload', {
  description:
    'What one call of forgetRecallItem did. It has no id of its own: a call that asks for confirmation and the confirmed call that follows are two answers about the same item.',
})
export class ForgetRecallItemPayload {
  @Field(() => ID, { description: 'The RecallItem asked about.' })
  recallItemId: string;

  @Field(() => SourceType)
  sourceType: ContextSourceType;

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
