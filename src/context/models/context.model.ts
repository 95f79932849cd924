import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { MessageModel } from '../../conversations/models/conversation.model.js';
import { SummaryPeriod } from '../../periods/models/period-summary.model.js';
import type { ContextSectionName, ContextSourceType } from '../context.types.js';
import { ContextSectionKind, SourceType } from './context-enums.model.js';

@ObjectType('ScoreComponent', {
  description:
    "One component of a ranking score: dense (cosine similarity), lexical (full-text rank divided by the best of its source), trigram, identifier (share of the query identifiers found), time (fit to a time expression), code (code boost), neighbor (best adjacent turn), speaker (1 for a turn by a speaker the query names), question (share of the turn that asks questions), agent (1 for the agent's own turn), standing (1 for a standing instruction or preference raised), base, rrf, final.",
})
export class ScoreComponentModel {
  @Field()
  name: string;

  @Field(() => Float)
  value: number;
}

@ObjectType('TurnRange', { description: 'Turn indexes, both ends included.' })
export class TurnRangeModel {
  @Field(() => Int)
  start: number;

  @Field(() => Int)
  end: number;
}

@ObjectType('PeriodProvenance', {
  description: "A period summary's period, local dates and what it was built from.",
})
export class PeriodProvenanceModel {
  @Field(() => SummaryPeriod)
  period: string;

  @Field({ description: 'First day, YYYY-MM-DD.' })
  start: string;

  @Field({ description: 'Last day (included), YYYY-MM-DD.' })
  end: string;

  @Field(() => [ID], {
    description: 'The conversation summaries (a week) or the weeks or months it was built from.',
  })
  builtFrom: string[];
}

@ObjectType('StoryProvenance', {
  description: 'A story passage: its story, title, page and characters in that page.',
})
export class StoryProvenanceModel {
  @Field(() => ID)
  storyId: string;

  @Field()
  title: string;

  @Field(() => Int, { description: '1-based.' })
  page: number;

  @Field(() => Int, { description: 'Where the passage starts in the page’s text.' })
  charStart: number;

  @Field(() => Int, { description: 'Where it ends (exclusive).' })
  charEnd: number;
}

@ObjectType('ItemProvenance', {
  description:
    'Where a remembered item came from. It has no id of its own: it belongs to the item that holds it.',
})
export class ProvenanceModel {
  @Field(() => SourceType)
  sourceType: ContextSourceType;

  @Field(() => ID, {
    description:
      "The item's own record: the fact, memory, summary, period summary, story passage or turn passage (its `sourceId`).",
  })
  sourceId: string;

  @Field(() => ID, { nullable: true })
  conversationId: string | null;

  @Field(() => [ID], { description: 'The turns it came from (yours only).' })
  messageIds: string[];

  @Field(() => [JSONObjectScalar], {
    description:
      "Each cited turn's metadata, in the order of messageIds: an imported turn's own id comes back here.",
  })
  messageMetadata: Record<string, unknown>[];

  @Field(() => TurnRangeModel, { nullable: true })
  turnRange: TurnRangeModel | null;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'When it was said (the end of the range for a summary).',
  })
  occurredAt: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  createdAt: Date | null;

  @Field(() => PeriodProvenanceModel, {
    nullable: true,
    description: 'For a period summary: its period and what it was built from.',
  })
  period?: PeriodProvenanceModel | null;

  @Field(() => StoryProvenanceModel, {
    nullable: true,
    description: 'For a story passage: its story, page and character range.',
  })
  story?: StoryProvenanceModel | null;
}

@ObjectType('ContextItem', {
  description:
    "A retrieved item as given to the model in this assembly. It has no id: its text, tokens and scores belong to this context (a normalized cache keeps them with the query that asked), and it names what it is with `recallItemId`, a RecallItem's id.",
})
export class ContextItemModel {
  @Field(() => SourceType)
  sourceType: ContextSourceType;

  @Field(() => ID, {
    description:
      'The id of the RecallItem it is (`<sourceType>:<sourceId>`, or `profile:<field>`): what recall returns for it and what forgetRecallItem takes.',
  })
  recallItemId: string;

  @Field(() => ID, { description: "The item's own record (see ItemProvenance.sourceId)." })
  sourceId: string;

  @Field(() => ContextSectionKind, { description: 'The context section it is in.' })
  section: ContextSectionName;

  @Field({ description: 'The text given to the model.' })
  text: string;

  @Field(() => Int)
  tokens: number;

  @Field(() => Float, { description: 'The final ranking score within its section.' })
  score: number;

  @Field(() => [ScoreComponentModel])
  scores: ScoreComponentModel[];

  @Field({ description: 'A code chunk.' })
  isCode: boolean;

  @Field(() => ProvenanceModel)
  provenance: ProvenanceModel;
}

@ObjectType('ContextSection')
export class ContextSectionModel {
  @Field(() => ContextSectionKind)
  name: ContextSectionName;

  @Field()
  title: string;

  @Field(() => Int, { description: 'Tokens of the section, heading included.' })
  tokens: number;

  @Field(() => [ContextItemModel])
  items: ContextItemModel[];
}

@ObjectType('AssembledContext', {
  description:
    'What the agent would be given for this message: the persona, the retrieved sections within the token budget and the recent window.',
})
export class AssembledContextModel {
  @Field()
  persona: string;

  @Field({ description: 'The system prompt: the persona followed by the sections.' })
  system: string;

  @Field(() => [ContextSectionModel])
  sections: ContextSectionModel[];

  @Field(() => [ContextItemModel], { description: 'Every item of the sections, in order.' })
  items: ContextItemModel[];

  @Field(() => Int, { description: 'Tokens of the retrieved sections (what the budget covers).' })
  tokenCount: number;

  @Field(() => Int)
  budget: number;

  @Field({ description: 'Whether a candidate was left out for lack of budget.' })
  truncated: boolean;

  @Field(() => [MessageModel], { description: 'The recent window, oldest first.' })
  recent: MessageModel[];
}
